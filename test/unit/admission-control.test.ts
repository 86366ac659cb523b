import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { AdmissionControl } from '../../modules/limits/admission-control.js';
import { DEFAULT_ADMISSION } from '../../modules/limits/admission-settings.js';
import { ConcurrencyGate } from '../../modules/limits/concurrency-gate.js';
import type { Permit } from '../../modules/limits/permit.js';
import type { Principal } from '../../projections/key-index/principal.js';

function principal(keyId: string, keyLimit: number | null, tenantLimit: number | null, tenantId = 'acme'): Principal {
  return {
    keyId, prefix: 'sk-sy-xx', tenantId, scopes: new Set(['inference']), aliases: null, expiresAt: null,
    budget: null,
    limits: { rpm: null, tpm: null, maxConcurrency: keyLimit },
    tenant: { status: 'active', limits: { rpm: null, tpm: null, maxConcurrency: tenantLimit }, budget: null },
  };
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('AdmissionControl', () => {
  test('a key over its own concurrency gets 429 naming the scope and takes no node capacity', async () => {
    const admission = new AdmissionControl({ ...DEFAULT_ADMISSION, maxConcurrentRequests: 10 });
    const app = principal('app', 2, null);
    const held = [await admission.admit(app, false), await admission.admit(app, true)];
    const error = await refusal(admission.admit(app, false));
    expect([error.status, error.code, error.headers['retry-after'], error.detail]).toEqual([429, 'rate_limited', '1', { scope: 'key.maxConcurrency', setting: 'apiKeys[app].limits.maxConcurrency' }]);
    expect(admission.load()).toEqual({ requests: 2, streams: 1, keys: 2, tenants: 2, aliases: 0, queued: 0 });
    // Another key of the same tenant is not affected by app's limit.
    held.push(await admission.admit(principal('other', 2, null), false));
    for (const permit of held) permit.release();
    expect(admission.load()).toEqual({ requests: 0, streams: 0, keys: 0, tenants: 0, aliases: 0, queued: 0 });
  });

  test('the tenant limit spans its keys', async () => {
    const admission = new AdmissionControl(DEFAULT_ADMISSION);
    const one = await admission.admit(principal('k1', null, 2), false);
    const two = await admission.admit(principal('k2', null, 2), false);
    const error = await refusal(admission.admit(principal('k3', null, 2), false));
    expect([error.status, error.detail]).toEqual([429, { scope: 'tenant.maxConcurrency', setting: 'tenants[acme].limits.maxConcurrency' }]);
    expect(admission.load().keys).toBe(2); // the refused key's slot was given back
    one.release();
    two.release();
  });

  test('the node fails fast with 503 overloaded, with separate room for streams', async () => {
    const admission = new AdmissionControl({ ...DEFAULT_ADMISSION, maxConcurrentRequests: 3, maxConcurrentStreams: 1 });
    const p = principal('app', null, null);
    const stream = await admission.admit(p, true);
    const streamError = await refusal(admission.admit(p, true));
    expect([streamError.status, streamError.code, streamError.detail]).toEqual([503, 'overloaded', { setting: 'SWITCHYARD_MAX_CONCURRENT_STREAMS' }]);
    expect(streamError.message).toBe('The gateway is at its limit of concurrent streams (SWITCHYARD_MAX_CONCURRENT_STREAMS). Retry shortly.');
    // A stream flood cannot take the buffered requests' room.
    const buffered = [await admission.admit(p, false), await admission.admit(p, false)];
    const full = await refusal(admission.admit(p, false));
    expect([full.status, full.code, full.headers['retry-after'], full.detail]).toEqual([503, 'overloaded', '1', { setting: 'SWITCHYARD_MAX_CONCURRENT_REQUESTS' }]);
    expect(admission.load()).toMatchObject({ requests: 3, streams: 1 });
    [stream, ...buffered].forEach((permit) => permit.release());
    expect(admission.load()).toEqual({ requests: 0, streams: 0, keys: 0, tenants: 0, aliases: 0, queued: 0 });
  });

  test('releasing a permit twice counts once', async () => {
    const admission = new AdmissionControl(DEFAULT_ADMISSION);
    const p = principal('app', null, null);
    const a = await admission.admit(p, true);
    const b = await admission.admit(p, true);
    a.release();
    a.release();
    expect(admission.load()).toMatchObject({ requests: 1, streams: 1, keys: 1 });
    b.release();
    expect(admission.load()).toMatchObject({ requests: 0, streams: 0, keys: 0 });
  });
});

describe('ConcurrencyGate', () => {
  test('without a queue it never waits', () => {
    const gate = new ConcurrencyGate(1);
    expect(gate.acquire()).not.toBeNull();
    expect(gate.acquire()).toBeNull();
  });

  test('an explicit queue is FIFO, bounded in depth and in wait', async () => {
    const gate = new ConcurrencyGate(1, { depth: 2, maxWaitMs: 50 });
    const holder = gate.acquire() as Permit;
    const first = gate.acquire() as Promise<Permit | null>;
    const second = gate.acquire() as Promise<Permit | null>;
    expect(gate.acquire()).toBeNull(); // the queue is full: refused at once
    expect(gate.waiting).toBe(2);
    holder.release();
    const granted = await first;
    expect(granted).not.toBeNull();
    expect(gate.inUse).toBe(1);
    // The second waiter is not served in time.
    await expect(second).resolves.toBeNull();
    expect(gate.waiting).toBe(0);
    granted!.release();
    expect(gate.inUse).toBe(0);
  });

  test('an aborted waiter leaves the queue', async () => {
    const gate = new ConcurrencyGate(1, { depth: 5, maxWaitMs: 10_000 });
    const holder = gate.acquire() as Permit;
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal) as Promise<Permit | null>;
    controller.abort();
    await expect(waiting).resolves.toBeNull();
    holder.release();
    expect([gate.inUse, gate.waiting]).toEqual([0, 0]);
  });
});

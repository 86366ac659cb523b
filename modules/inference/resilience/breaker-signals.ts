import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { BreakerTransition } from './circuit-breaker.js';
import type { DeploymentHealth } from './deployment-health.js';


type Signal =
  | { kind: 'open'; deploymentId: string; nodeId: string; remainingMs: number }
  | { kind: 'close'; deploymentId: string; nodeId: string };

/**
 * Shares breaker openings between gateway nodes through Redis, so that a deployment one node found
 * broken stops receiving traffic from every node (within 2 s; publish/subscribe usually takes
 * milliseconds). Off the request path entirely: a local transition publishes in the background, and
 * received signals update the local breakers. A hash of open breakers, re-read every
 * `syncIntervalMs`, covers nodes that start later or missed a message while reconnecting.
 *
 * Only this node's own transitions are published (adopted ones are not echoed back). An adopted
 * opening holds traffic off until the remote cool-down ends; the local breaker then sends its own
 * trial traffic.
 */
export class BreakerSignals {
  private static readonly logger = new Logger('BreakerSignals');
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private sync: NodeJS.Timeout | null = null;
  private closed = false;
  /** Where openings and closings are published. */
  private readonly channel: string;
  /** deploymentId → {until, nodeId} of the latest opening, for nodes that join (or reconnect) later. */
  private readonly openBreakers: string;

  constructor(
    redisUrl: string,
    private readonly nodeId: string,
    private readonly health: DeploymentHealth,
    private readonly syncIntervalMs: number,
    namespace = 'switchyard',
  ) {
    // Under SWITCHYARD_REDIS_NAMESPACE: another installation's deployment of the same id is another deployment.
    this.channel = `${namespace}:breaker`;
    this.openBreakers = `${namespace}:breaker:open`;
    // Both connections connect at once and reconnect on their own. The publisher has no offline queue:
    // a signal that cannot be sent now is dropped (the periodic sync repairs it), never buffered
    // without bound while Redis is away. The subscriber queues its SUBSCRIBE until Redis is reachable.
    const name = `switchyard-breakers-${nodeId}`;
    this.publisher = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectionName: name });
    this.subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName: name });
    this.publisher.on('error', () => undefined); // failures surface per command; reconnection is automatic
    this.subscriber.on('error', () => undefined);
  }

  /**
   * Subscribes and reads the open breakers before the node serves. A Redis that is unreachable does
   * not hold the start up beyond `waitMs`: breakers then work per node until Redis answers.
   */
  async start(waitMs = 2_000): Promise<void> {
    this.subscriber.on('message', (_channel: string, message: string) => this.receive(message));
    this.health.onTransition((deploymentId, transition) => this.publish(deploymentId, transition));
    const publisherReady = new Promise<void>((resolve) => (this.publisher.status === 'ready' ? resolve() : this.publisher.once('ready', () => resolve())));
    const ready = Promise.all([this.subscriber.subscribe(this.channel), publisherReady]).then(() => true, () => false);
    let timer: NodeJS.Timeout | undefined;
    const connected = await Promise.race([ready, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)))]);
    clearTimeout(timer);
    if (!connected) BreakerSignals.logger.warn('Redis is not reachable yet: circuit breakers stay per node until it is');
    await this.pull();
    this.sync = setInterval(() => void this.pull(), this.syncIntervalMs);
    this.sync.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sync) clearInterval(this.sync);
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  private publish(deploymentId: string, transition: BreakerTransition): void {
    if (this.closed || transition.source !== 'local') return;
    let pipeline;
    if (transition.to === 'open') {
      const signal: Signal = { kind: 'open', deploymentId, nodeId: this.nodeId, remainingMs: Math.max(0, transition.openUntil - Date.now()) };
      pipeline = this.publisher
        .multi()
        .hset(this.openBreakers, deploymentId, JSON.stringify({ until: transition.openUntil, nodeId: this.nodeId }))
        .publish(this.channel, JSON.stringify(signal));
    } else if (transition.to === 'closed') {
      const signal: Signal = { kind: 'close', deploymentId, nodeId: this.nodeId };
      pipeline = this.publisher.multi().hdel(this.openBreakers, deploymentId).publish(this.channel, JSON.stringify(signal));
    } else {
      return;
    }
    pipeline.exec().catch((error: Error) => BreakerSignals.logger.warn(`breaker signal for ${deploymentId} not sent: ${error.message}`));
  }

  private receive(message: string): void {
    let signal: Signal;
    try {
      signal = JSON.parse(message) as Signal;
    } catch {
      return;
    }
    if (!signal || typeof signal.deploymentId !== 'string' || signal.nodeId === this.nodeId) return;
    if (signal.kind === 'open' && Number.isFinite(signal.remainingMs)) {
      this.health.adoptOpen(signal.deploymentId, Date.now() + signal.remainingMs, signal.nodeId);
    } else if (signal.kind === 'close') {
      this.health.adoptClose(signal.deploymentId, signal.nodeId);
    }
  }

  private async pull(): Promise<void> {
    if (this.closed) return;
    let entries: Record<string, string>;
    try {
      entries = await this.publisher.hgetall(this.openBreakers);
    } catch {
      return; // Redis away: local breakers keep working on their own
    }
    const now = Date.now();
    for (const [deploymentId, raw] of Object.entries(entries)) {
      try {
        const { until, nodeId } = JSON.parse(raw) as { until: number; nodeId: string };
        if (nodeId !== this.nodeId && until > now) this.health.adoptOpen(deploymentId, until, nodeId);
      } catch {
        // an entry this version cannot read is skipped
      }
    }
  }
}

import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { useAction } from '../action.js';
import { Button, Empty, ErrorNotice, Field, LoadMore, Loading, PageHeader, Progress, Section, StatusBadge, SuccessNotice } from '../components/ui.js';
import { usd } from '../format.js';
import { LIST_PAGE, type ListPage, usePagedList } from '../paged-list.js';
import { useResource } from '../resource.js';
import { canChange, type Session } from '../session.js';
import type { ContentPolicy, Limits, Tenant } from '../types.js';
import { KeysPanel } from './keys.js';

/** Tenants with their limits and budgets, their API keys, and the content policies they can carry. */
export function AccessPage({ session }: { session: Session }) {
  const tenants = usePagedList<Tenant>('/admin/v1/tenants', {}, 'tenants');
  const [selected, setSelected] = useState<string | null>(null);
  const writable = canChange(session, 'access');
  const listed = tenants.items?.find((t) => t.id === selected) ?? null;
  // A tenant selected but not on the pages read (one just created, further in id order) is read on its own.
  const unlisted = selected !== null && tenants.items !== null && !listed ? selected : null;
  const single = useResource((signal) => (unlisted ? api<Tenant>(`/admin/v1/tenants/${encodeURIComponent(unlisted)}`, { signal }) : Promise.resolve(null)), `tenant-${unlisted ?? ''}`);
  const tenant = listed ?? (single.data && single.data.id === selected ? single.data : null);
  const changed = () => {
    tenants.reload();
    single.reload();
  };
  return (
    <>
      <PageHeader title="Access" />
      <Section title="Tenants">
        <ErrorNotice error={tenants.error} />
        {!tenants.items ? <Loading /> : tenants.items.length === 0 ? <Empty>No tenants yet.</Empty> : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr><th scope="col">Tenant</th><th scope="col">Status</th><th scope="col">Limits</th><th scope="col" class="num">Spent this month</th><th scope="col">Budget</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
              </thead>
              <tbody>
                {tenants.items.map((t) => (
                  <tr key={t.id} class={t.id === selected ? 'selected' : undefined}>
                    <td><strong class="tenant-id">{t.id}</strong>{t.name ? <div class="muted tenant-name">{t.name}</div> : null}</td>
                    <td><StatusBadge status={t.status} /></td>
                    <td>{limitsText(t.limits)}</td>
                    <td class="num">{usd(t.spend.month.spentUsd)}</td>
                    <td>
                      <Progress value={t.spend.budgetUsedPct} label={`Budget of ${t.id} used`} />
                      {t.budget ? <div class="muted small">{budgetText(t)}</div> : null}
                    </td>
                    <td>
                      <Button variant="secondary" class="button-small" aria-pressed={t.id === selected} aria-label={`Manage ${t.id}`}
                        onClick={() => setSelected(t.id === selected ? null : t.id)}>Manage</Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <LoadMore list={tenants} noun="tenants" />
        {writable ? <CreateTenant onCreated={(id) => { tenants.reload(); setSelected(id); }} /> : null}
      </Section>
      {tenant ? (
        <>
          <KeysPanel tenant={tenant.id} writable={writable} />
          {writable ? <TenantSettings key={`${tenant.id}-${tenant.version}`} tenant={tenant} onChanged={changed} /> : null}
        </>
      ) : null}
      <ContentPolicies />
    </>
  );
}

export function limitsText(limits: Limits): string {
  const parts = [
    limits.rpm ? `${limits.rpm.toLocaleString('en-US')} RPM` : null,
    limits.tpm ? `${limits.tpm.toLocaleString('en-US')} TPM` : null,
    limits.maxConcurrency ? `${limits.maxConcurrency} concurrent` : null,
  ].filter((part) => part !== null);
  return parts.length ? parts.join(' · ') : 'unlimited';
}

function budgetText(t: Tenant): string {
  const b = t.budget!;
  const amount = b.monthlyUsd ? `${usd(b.monthlyUsd, 2)} / month` : `${usd(b.dailyUsd, 2)} / day`;
  return `${amount} · ${b.enforcement} · alert at ${b.softPct}%`;
}

function CreateTenant({ onCreated }: { onCreated: (id: string) => void }) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const { busy, error, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      await api('/admin/v1/tenants', { method: 'POST', body: name ? { id, name } : { id } });
      setId('');
      setName('');
      onCreated(id);
    });
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Create a tenant">
      <Field id="tenant-id" label="New tenant id">
        <input id="tenant-id" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" value={id} onInput={(e) => setId(e.currentTarget.value)} />
      </Field>
      <Field id="tenant-name" label="Display name (optional)">
        <input id="tenant-name" value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Button type="submit" busy={busy}>Create tenant</Button>
      <ErrorNotice error={error} />
    </form>
  );
}

/** Limits and budget of one tenant: each its own PUT, as the admin API and the CLI set them. */
function TenantSettings({ tenant, onChanged }: { tenant: Tenant; onChanged: () => void }) {
  const [limits, setLimits] = useState({ rpm: tenant.limits.rpm ?? '', tpm: tenant.limits.tpm ?? '', maxConcurrency: tenant.limits.maxConcurrency ?? '' });
  const [budget, setBudget] = useState({
    amount: tenant.budget?.monthlyUsd ?? tenant.budget?.dailyUsd ?? '', period: tenant.budget?.dailyUsd && !tenant.budget.monthlyUsd ? 'daily' : 'monthly',
    softPct: String(tenant.budget?.softPct ?? 80), enforcement: tenant.budget?.enforcement ?? 'hard',
  });
  const [state, setState] = useState<{ busy: boolean; error: unknown; done: string | null }>({ busy: false, error: null, done: null });
  const run = async (what: string, action: () => Promise<unknown>) => {
    setState({ busy: true, error: null, done: null });
    try {
      await action();
      setState({ busy: false, error: null, done: what });
      onChanged();
    } catch (error) {
      setState({ busy: false, error, done: null });
    }
  };
  const base = `/admin/v1/tenants/${encodeURIComponent(tenant.id)}`;
  const limitValue = (value: string | number) => (value === '' ? null : Number(value));
  return (
    <Section title={`Limits and budget of ${tenant.id}`}>
      <div class="grid-2">
        <form class="stack" onSubmit={(e) => { e.preventDefault(); void run('Limits saved.', () => api(`${base}/limits`, { method: 'PUT', body: { rpm: limitValue(limits.rpm), tpm: limitValue(limits.tpm), maxConcurrency: limitValue(limits.maxConcurrency) } })); }}>
          <h3>Rate limits</h3>
          <p class="muted small">Empty means unlimited.</p>
          <div class="row">
            <Field id="limit-rpm" label="Requests / minute"><input id="limit-rpm" type="number" min={1} value={limits.rpm} onInput={(e) => setLimits({ ...limits, rpm: e.currentTarget.value })} /></Field>
            <Field id="limit-tpm" label="Tokens / minute"><input id="limit-tpm" type="number" min={1} value={limits.tpm} onInput={(e) => setLimits({ ...limits, tpm: e.currentTarget.value })} /></Field>
            <Field id="limit-concurrency" label="Concurrent requests"><input id="limit-concurrency" type="number" min={1} value={limits.maxConcurrency} onInput={(e) => setLimits({ ...limits, maxConcurrency: e.currentTarget.value })} /></Field>
          </div>
          <Button type="submit" busy={state.busy}>Save limits</Button>
        </form>
        <form class="stack" onSubmit={(e) => {
          e.preventDefault();
          void run('Budget saved.', () => api(`${base}/budget`, {
            method: 'PUT',
            body: { [budget.period === 'daily' ? 'dailyUsd' : 'monthlyUsd']: String(budget.amount), softPct: Number(budget.softPct), enforcement: budget.enforcement },
          }));
        }}>
          <h3>Budget</h3>
          <div class="row">
            <Field id="budget-amount" label="Amount (USD)"><input id="budget-amount" required inputMode="decimal" pattern="[0-9]+(\.[0-9]+)?" value={budget.amount} onInput={(e) => setBudget({ ...budget, amount: e.currentTarget.value })} /></Field>
            <Field id="budget-period" label="Per">
              <select id="budget-period" value={budget.period} onChange={(e) => setBudget({ ...budget, period: e.currentTarget.value })}><option value="monthly">month</option><option value="daily">day</option></select>
            </Field>
            <Field id="budget-soft" label="Alert at (%)"><input id="budget-soft" type="number" min={1} max={100} value={budget.softPct} onInput={(e) => setBudget({ ...budget, softPct: e.currentTarget.value })} /></Field>
            <Field id="budget-enforcement" label="At 100%">
              <select id="budget-enforcement" value={budget.enforcement} onChange={(e) => setBudget({ ...budget, enforcement: e.currentTarget.value as 'hard' | 'soft' })}>
                <option value="hard">refuse (hard)</option><option value="soft">alert only (soft)</option>
              </select>
            </Field>
          </div>
          <div class="form-actions">
            <Button type="submit" busy={state.busy}>Save budget</Button>
            {tenant.budget ? <Button variant="secondary" busy={state.busy} onClick={() => void run('Budget removed.', () => api(`${base}/budget`, { method: 'DELETE' }))}>Remove budget</Button> : null}
          </div>
        </form>
      </div>
      <ErrorNotice error={state.error} />
      {state.done ? <SuccessNotice>{state.done}</SuccessNotice> : null}
    </Section>
  );
}

function ContentPolicies() {
  const [tokens, setTokens] = useState<string[]>([]);
  const cursor = tokens.at(-1);
  const policies = useResource((signal) => api<ListPage<ContentPolicy>>('/admin/v1/content-policies', { signal, query: { pageToken: cursor, limit: LIST_PAGE, status: 'all' } }), `policies-${cursor ?? ''}`);
  return (
    <Section title="Content policies">
      <ErrorNotice error={policies.error} />
      {!policies.data ? <Loading /> : policies.data.data.length === 0 ? <Empty>No content policies are defined. Define them in the configuration file or with PUT /admin/v1/content-policies/&#123;id&#125;.</Empty> : (
        <>
          <table>
            <thead><tr><th scope="col">Policy</th><th scope="col">Status</th><th scope="col">Attached to</th></tr></thead>
            <tbody>
              {policies.data.data.map((policy) => (
                <tr key={policy.id}>
                  <td><strong>{policy.id}</strong></td>
                  <td><StatusBadge status={policy.status} /></td>
                  <td>{attachments(policy)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="pager" aria-label="Content policy pages">
            <Button variant="secondary" disabled={tokens.length === 0} onClick={() => setTokens([])}>First page</Button>
            <Button variant="secondary" disabled={!policies.data.nextPageToken} onClick={() => setTokens([...tokens, policies.data!.nextPageToken!])}>Next page</Button>
          </nav>
        </>
      )}
    </Section>
  );
}

function attachments(policy: ContentPolicy): string {
  return policy.attachedTo?.length ? policy.attachedTo.join(', ') : 'nothing';
}

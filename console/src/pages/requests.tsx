import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Button, Empty, ErrorNotice, Field, Link, Loading, PageHeader, Section, StatusBadge } from '../components/ui.js';
import { count, ms, usd, when } from '../format.js';
import { useResource } from '../resource.js';
import { navigate } from '../router.js';
import type { RequestRow } from '../types.js';

const PAGE_SIZE = 50;
const STATUSES = ['success', 'failed', 'cancelled', 'rejected', 'incomplete'];
const FILTERS = ['tenant', 'key', 'alias', 'status', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/**
 * Request search: the filters live in the URL (a search can be shared and survives reload); each page is one
 * server call with a keyset page token, newest first — the page never asks anything per row.
 */
export function RequestsPage({ query }: { query: URLSearchParams }) {
  const applied: Filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ''])) as Filters;
  const [form, setForm] = useState<Filters>(applied);
  const [requestId, setRequestId] = useState('');
  const [tokens, setTokens] = useState<string[]>([]);
  const pageToken = tokens.at(-1);
  const key = `${query.toString()}|${pageToken ?? ''}`;
  const page = useResource((signal) => api<{ requests: RequestRow[]; nextPageToken: string | null }>('/admin/v1/requests', {
    signal,
    query: { ...applied, from: isoOf(applied.from), to: isoOf(applied.to), limit: PAGE_SIZE, pageToken },
  }), key);

  const search = (event: Event) => {
    event.preventDefault();
    const params = new URLSearchParams(Object.entries(form).filter(([, value]) => value !== ''));
    setTokens([]);
    navigate(`/requests${params.toString() ? `?${params.toString()}` : ''}`);
  };
  const open = (event: Event) => {
    event.preventDefault();
    if (requestId.trim()) navigate(`/requests/${encodeURIComponent(requestId.trim())}`);
  };
  const input = (name: keyof Filters, label: string) => (
    <Field id={`filter-${name}`} label={label}>
      <input id={`filter-${name}`} type="text" value={form[name]} onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })} />
    </Field>
  );
  const moment = (name: 'from' | 'to', label: string) => (
    <Field id={`filter-${name}`} label={label}>
      <input id={`filter-${name}`} type="datetime-local" value={form[name]} onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })} />
    </Field>
  );
  return (
    <>
      <PageHeader title="Requests" />
      <Section title="Find a request">
        <form class="inline-form" onSubmit={open} role="search" aria-label="Open a request by id">
          <Field id="request-id" label="Request id (x-request-id)">
            <input id="request-id" class="mono" value={requestId} onInput={(e) => setRequestId(e.currentTarget.value)} />
          </Field>
          <Button type="submit">Open</Button>
        </form>
        <form class="filters" onSubmit={search} role="search" aria-label="Search requests">
          {input('tenant', 'Tenant')}
          {input('key', 'Key')}
          {input('alias', 'Alias')}
          <Field id="filter-status" label="Status">
            <select id="filter-status" value={form.status} onChange={(e) => setForm({ ...form, status: e.currentTarget.value })}>
              <option value="">any</option>
              {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          </Field>
          {moment('from', 'From (UTC)')}
          {moment('to', 'To (UTC)')}
          <div class="form-actions">
            <Button type="submit">Search</Button>
            <Button variant="secondary" onClick={() => { setForm(Object.fromEntries(FILTERS.map((n) => [n, ''])) as Filters); setTokens([]); navigate('/requests'); }}>Clear</Button>
          </div>
        </form>
      </Section>
      <Section title="Results">
        <ErrorNotice error={page.error} />
        {!page.data ? <Loading /> : page.data.requests.length === 0 ? <Empty>No request matches.</Empty> : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time (UTC)</th><th scope="col">Request</th><th scope="col">Tenant · key</th><th scope="col">Alias</th><th scope="col">Status</th>
                  <th scope="col" class="num">Attempts</th><th scope="col" class="num">Latency</th><th scope="col" class="num">Tokens in / out</th><th scope="col" class="num">Cost</th>
                </tr>
              </thead>
              <tbody>
                {page.data.requests.map((r) => (
                  <tr key={r.requestId}>
                    <td class="nowrap">{when(r.at)}</td>
                    <td><Link to={`/requests/${encodeURIComponent(r.requestId)}`} class="mono">{r.requestId}</Link></td>
                    <td>{r.tenantId ?? '—'}<span class="muted">{r.keyId ? ` · ${r.keyId}` : ''}</span></td>
                    <td>{r.alias ?? '—'}</td>
                    <td><StatusBadge status={r.status} /></td>
                    <td class="num">{count(r.attempts)}</td>
                    <td class="num">{ms(r.latencyMs)}</td>
                    <td class="num">{`${count(r.inputTokens)} / ${count(r.outputTokens)}`}</td>
                    <td class="num">{usd(r.costUsd, 6)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <nav class="pager" aria-label="Result pages">
          <Button variant="secondary" disabled={tokens.length === 0} onClick={() => setTokens([])}>Newest</Button>
          <Button variant="secondary" disabled={tokens.length === 0} onClick={() => setTokens(tokens.slice(0, -1))}>Previous page</Button>
          <Button variant="secondary" disabled={!page.data?.nextPageToken} onClick={() => setTokens([...tokens, page.data!.nextPageToken!])}>Next page</Button>
        </nav>
      </Section>
    </>
  );
}

/** A datetime-local value read as UTC (the page labels it so, as every time in the console is). */
function isoOf(local: string): string | undefined {
  return local ? new Date(`${local}:00Z`).toISOString() : undefined;
}

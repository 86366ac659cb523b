import { api } from '../api.js';
import { Empty, ErrorNotice, Facts, Link, Loading, PageHeader, Section, StatusBadge } from '../components/ui.js';
import { count, ms, shown, usd, when } from '../format.js';
import { useResource } from '../resource.js';
import type { EventPage } from '../types.js';

interface Attempt {
  attempt: number; at: string; globalPosition: number; deploymentId: string; providerId: string; model: string; strategy: string | null;
  routingReason: string | null; outcome: string; errorClass: string | null; httpStatus: number | null;
  usage: { input: number; cachedInput: number; output: number; reasoning: number } | null; usageEvidence: string | null;
  cost: { total: string } | null; price: { version: number; inputPer1M?: string; outputPer1M?: string; scheduledAt?: string };
  latencyMs: number | null; ttftMs: number | null; providerRequestId: string | null; ledger: { costUsd: string } | null;
}

interface RequestStory {
  requestId: string; status: string;
  admission: (Record<string, unknown> & { at: string; alias?: string; aliasVersion?: number; tenantId?: string; keyId?: string; stream?: boolean }) | null;
  rejection: (Record<string, unknown> & { at: string; reason?: string; code?: string }) | null;
  alias: { name: string; version: number; strategy?: string; publishedAt?: string; publishedBy?: string | null } | null;
  attempts: Attempt[];
  cacheHit: Record<string, unknown> | null;
  completion: (Record<string, unknown> & { at: string; status: string }) | null;
  billing: { ledgerRows: number; costUsd: string };
}

/** One request's whole story: admission, every attempt with its provider, latency, tokens and cost, the versions in force, the events. */
export function RequestStoryPage({ requestId }: { requestId: string }) {
  const story = useResource((signal) => api<RequestStory>(`/admin/v1/requests/${encodeURIComponent(requestId)}`, { signal }), requestId);
  const events = useResource((signal) => api<EventPage>('/admin/v1/events', { signal, query: { stream: `request-${requestId}`, limit: 200 } }), `events-${requestId}`);
  const s = story.data;
  return (
    <>
      <PageHeader title="Request">
        <Link to="/requests">All requests</Link>
      </PageHeader>
      <p class="mono request-id">{requestId}</p>
      <ErrorNotice error={story.error} />
      {!s ? (story.error ? null : <Loading />) : (
        <>
          <Section title="Summary">
            <Facts rows={[
              ['Status', <StatusBadge status={s.status} />],
              ['Admitted', when(s.admission?.at)],
              ['Tenant', String(s.admission?.tenantId ?? '—')],
              ['Key', String(s.admission?.keyId ?? '—')],
              ['Alias', s.alias ? `${s.alias.name} v${s.alias.version}${s.alias.strategy ? ` (${s.alias.strategy})` : ''}` : '—'],
              ['Alias published', s.alias?.publishedAt ? `${when(s.alias.publishedAt)} by ${s.alias.publishedBy ?? 'unknown'}` : '—'],
              ['Attempts', count(s.attempts.length)],
              ['Billed', `${usd(s.billing.costUsd, 8)} (${s.billing.ledgerRows} ledger rows)`],
              ['Completed', when(s.completion?.at)],
            ]} />
            {s.rejection ? <ErrorNotice error={new Error(`Rejected: ${shown(s.rejection.reason ?? s.rejection.code ?? s.rejection)}`)} /> : null}
            {s.cacheHit ? <p>Answered from the exact cache: no provider was called.</p> : null}
          </Section>
          <Section title="Attempts">
            {s.attempts.length === 0 ? <Empty>No provider attempt was made.</Empty> : (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">#</th><th scope="col">Deployment · provider</th><th scope="col">Outcome</th><th scope="col" class="num">Latency (TTFT)</th>
                      <th scope="col" class="num">Tokens in / out</th><th scope="col" class="num">Cost</th><th scope="col">Price version</th>
                    </tr>
                  </thead>
                  <tbody>
                    {s.attempts.map((a) => (
                      <tr key={a.attempt}>
                        <td>{a.attempt}</td>
                        <td><strong>{a.deploymentId}</strong><div class="muted">{`${a.providerId} · ${a.model}`}</div>{a.routingReason ? <div class="muted small">{a.routingReason}</div> : null}</td>
                        <td><StatusBadge status={a.outcome} />{a.errorClass ? <div class="small">{`${a.errorClass}${a.httpStatus ? ` (HTTP ${a.httpStatus})` : ''}`}</div> : null}</td>
                        <td class="num">{ms(a.latencyMs)}{a.ttftMs !== null ? <div class="muted small">{`TTFT ${ms(a.ttftMs)}`}</div> : null}</td>
                        <td class="num">{`${count(a.usage?.input)} / ${count(a.usage?.output)}`}{a.usageEvidence ? <div class="muted small">{a.usageEvidence}</div> : null}</td>
                        <td class="num">{usd(a.ledger?.costUsd ?? a.cost?.total ?? null, 8)}</td>
                        <td>{`v${a.price.version}`}{a.price.inputPer1M ? <div class="muted small">{`${usd(a.price.inputPer1M)} in · ${usd(a.price.outputPer1M)} out / 1M`}</div> : null}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Section>
        </>
      )}
      <Section title="Event timeline">
        <ErrorNotice error={events.error} />
        {!events.data ? <Loading /> : events.data.data.length === 0 ? <Empty>No events.</Empty> : (
          <ol class="timeline">
            {events.data.data.map((event) => (
              <li key={event.eventId}>
                <div class="timeline-head">
                  <strong>{event.type}</strong>
                  <span class="muted">{` #${event.globalPosition} · ${when(event.recordedAt)}`}</span>
                </div>
                <details>
                  <summary>Data</summary>
                  <pre class="json">{JSON.stringify(event.data, null, 2)}</pre>
                </details>
              </li>
            ))}
          </ol>
        )}
      </Section>
    </>
  );
}

import { useState } from 'preact/hooks';
import { api, withQuery } from '../api.js';
import { useAction } from '../action.js';
import { Button, Empty, ErrorNotice, Facts, Field, Loading, PageHeader, Section } from '../components/ui.js';
import { count, when } from '../format.js';
import { useResource } from '../resource.js';
import type { AuditReport, Checkpoint, EventPage } from '../types.js';

const PAGE_SIZE = 50;

interface Change {
  globalPosition: number; at: string; actor: string | null; action: string; stream: string; streamVersion: number;
  correlationId: string | null; eventId: string; data: Record<string, unknown>;
}

/** The audit chain: verify it (with the first bad position when it breaks), its checkpoints, the change log, every event, export. */
export function AuditPage() {
  return (
    <>
      <PageHeader title="Audit" />
      <div class="grid-2">
        <Verification />
        <Checkpoints />
      </div>
      <Changes />
      <Events />
      <Export />
    </>
  );
}

type VerificationScope = 'latest-checkpoint' | 'genesis';

function Verification() {
  const [report, setReport] = useState<AuditReport | null>(null);
  const { busy, running, error, run } = useAction<VerificationScope>();
  const verify = (since: VerificationScope) => run(async () => {
    setReport(await api<AuditReport>('/admin/v1/audit/verify', { method: 'POST', body: { since } }));
  }, since);
  const actions = (
    <>
      <Button onClick={() => verify('latest-checkpoint')} busy={running === 'latest-checkpoint'} disabled={busy}>
        {running === 'latest-checkpoint' ? 'Verifying…' : 'Verify since the last checkpoint'}
      </Button>
      <Button variant="secondary" onClick={() => verify('genesis')} busy={running === 'genesis'} disabled={busy}>
        {running === 'genesis' ? 'Verifying the whole chain…' : 'Verify the whole chain'}
      </Button>
    </>
  );
  return (
    <Section title="Chain verification" actions={actions}>
      <p class="muted">
        Recomputes each event’s hash from the log and matches it against the chain and its signed checkpoints. Since the last
        checkpoint: its signature, its chain entry and its event are checked, then only what came after (seconds). The whole chain:
        every event from the first (minutes on a long log), which also finds an event altered before the last checkpoint.
      </p>
      <ErrorNotice error={error} />
      <div aria-live="polite">
        {report ? (
          <div class={`verdict ${report.ok ? 'verdict-ok' : 'verdict-bad'}`} data-testid="audit-verdict">
            <p class="verdict-title">{report.ok ? '✓ The chain is intact' : '✗ The chain is broken'}</p>
            {report.problem ? (
              <p>
                {`First bad position: ${report.problem.globalPosition ?? 'unknown'}${report.problem.sequence !== null ? ` (chain sequence ${report.problem.sequence})` : ''} — `}
                <strong>{report.problem.kind}</strong>{`: ${report.problem.message}`}
              </p>
            ) : null}
            <Facts rows={[
              ['Verified', report.since ? `since the checkpoint at #${report.since.globalPosition} (sequence ${report.since.sequence})` : 'the whole chain'],
              ['Events verified', count(report.verifiedEvents)],
              ['Not chained yet', count(report.pendingEvents)],
              ['Head', report.head ? `#${report.head.globalPosition} (sequence ${report.head.sequence})` : '—'],
              ['Checkpoints verified', `${count(report.checkpoints.verified)}${report.checkpoints.signaturesChecked ? ', signatures checked' : ', signatures not checked (no signing key)'}`],
              ['Signer', report.signer ? `${report.signer.algorithm} · ${report.signer.keyId}` : 'none'],
            ]} />
          </div>
        ) : null}
      </div>
    </Section>
  );
}

/** The signed checkpoints, newest first, in keyset pages (GET /admin/v1/audit/checkpoints). */
function Checkpoints() {
  const [pages, setPages] = useState<number[]>([]);
  const before = pages.at(-1);
  const checkpoints = useResource((signal) => api<{ data: Checkpoint[]; nextBefore: number | null }>('/admin/v1/audit/checkpoints', {
    signal, query: { before, limit: 10 },
  }), `checkpoints-${before ?? ''}`);
  return (
    <Section title="Checkpoints">
      <ErrorNotice error={checkpoints.error} />
      {!checkpoints.data ? <Loading /> : checkpoints.data.data.length === 0 ? (
        <Empty>No checkpoint has been signed yet (they are signed as the chain grows, when SWITCHYARD_AUDIT_SIGNING_KEY is set).</Empty>
      ) : (
        <table>
          <thead><tr><th scope="col" class="num">Sequence</th><th scope="col" class="num">Position</th><th scope="col">Signed (UTC)</th><th scope="col">Key</th></tr></thead>
          <tbody>
            {checkpoints.data.data.map((c) => (
              <tr key={c.sequence}>
                <td class="num">{c.sequence}</td><td class="num">{c.globalPosition}</td><td class="nowrap">{when(c.signedAt)}</td>
                <td title={c.hash}>{`${c.algorithm} · ${c.keyId}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Checkpoint pages">
        <Button variant="secondary" disabled={pages.length === 0} onClick={() => setPages([])}>Newest</Button>
        <Button variant="secondary" disabled={!checkpoints.data?.nextBefore} onClick={() => setPages([...pages, checkpoints.data!.nextBefore!])}>Older</Button>
      </nav>
    </Section>
  );
}

function Changes() {
  const [filters, setFilters] = useState({ actor: '', action: '' });
  const [applied, setApplied] = useState(filters);
  const [pages, setPages] = useState<string[]>([]);
  const after = pages.at(-1);
  const changes = useResource((signal) => api<{ data: Change[]; next: string }>('/admin/v1/audit', {
    signal, query: { actor: applied.actor, action: applied.action, after, limit: PAGE_SIZE },
  }), `${applied.actor}|${applied.action}|${after ?? ''}`);
  return (
    <Section title="Changes">
      <form class="filters" role="search" aria-label="Filter changes" onSubmit={(e) => { e.preventDefault(); setPages([]); setApplied(filters); }}>
        <Field id="audit-actor" label="Actor (e.g. console:admin:…)"><input id="audit-actor" value={filters.actor} onInput={(e) => setFilters({ ...filters, actor: e.currentTarget.value })} /></Field>
        <Field id="audit-action" label="Action (event types, comma-separated)"><input id="audit-action" value={filters.action} onInput={(e) => setFilters({ ...filters, action: e.currentTarget.value })} /></Field>
        <div class="form-actions"><Button type="submit">Filter</Button></div>
      </form>
      <ErrorNotice error={changes.error} />
      {!changes.data ? <Loading /> : changes.data.data.length === 0 ? <Empty>No change matches.</Empty> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Position</th><th scope="col">Time (UTC)</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Stream</th></tr></thead>
            <tbody>
              {changes.data.data.map((c) => (
                <tr key={c.eventId}><td class="num">{c.globalPosition}</td><td class="nowrap">{when(c.at)}</td><td>{c.actor ?? '—'}</td><td>{c.action}</td><td><code>{c.stream}</code></td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Change pages">
        <Button variant="secondary" disabled={pages.length === 0} onClick={() => setPages([])}>First page</Button>
        <Button variant="secondary" disabled={!changes.data || changes.data.data.length < PAGE_SIZE} onClick={() => setPages([...pages, changes.data!.next])}>Next page</Button>
      </nav>
    </Section>
  );
}

function Events() {
  const [filters, setFilters] = useState({ stream: '', type: '' });
  const [applied, setApplied] = useState(filters);
  const [pages, setPages] = useState<string[]>([]);
  const after = pages.at(-1);
  const events = useResource((signal) => api<EventPage>('/admin/v1/events', {
    signal, query: { stream: applied.stream, type: applied.type, after, limit: PAGE_SIZE },
  }), `${applied.stream}|${applied.type}|${after ?? ''}`);
  return (
    <Section title="Events">
      <form class="filters" role="search" aria-label="Filter events" onSubmit={(e) => { e.preventDefault(); setPages([]); setApplied(filters); }}>
        <Field id="events-stream" label="Stream (e.g. alias-chat)"><input id="events-stream" value={filters.stream} onInput={(e) => setFilters({ ...filters, stream: e.currentTarget.value })} /></Field>
        <Field id="events-type" label="Types (comma-separated)"><input id="events-type" value={filters.type} onInput={(e) => setFilters({ ...filters, type: e.currentTarget.value })} /></Field>
        <div class="form-actions"><Button type="submit">Filter</Button></div>
      </form>
      <ErrorNotice error={events.error} />
      {!events.data ? <Loading /> : events.data.data.length === 0 ? <Empty>No event matches.</Empty> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Position</th><th scope="col">Time (UTC)</th><th scope="col">Type</th><th scope="col">Stream</th><th scope="col">Actor</th><th scope="col">Data</th></tr></thead>
            <tbody>
              {events.data.data.map((event) => (
                <tr key={event.eventId}>
                  <td class="num">{event.globalPosition}</td><td class="nowrap">{when(event.recordedAt)}</td><td>{event.type}</td><td><code>{event.streamId}</code></td>
                  <td>{typeof event.metadata.actor === 'string' ? event.metadata.actor : '—'}</td>
                  <td><details><summary>{`${Object.keys(event.data).length} fields`}</summary><pre class="json">{JSON.stringify(event.data, null, 2)}</pre></details></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Event pages">
        <Button variant="secondary" disabled={pages.length === 0} onClick={() => setPages([])}>First page</Button>
        <Button variant="secondary" disabled={!events.data || events.data.data.length < PAGE_SIZE} onClick={() => setPages([...pages, events.data!.next])}>Next page</Button>
      </nav>
    </Section>
  );
}

/**
 * A plain link, not fetch: the browser streams the export to disk with the session cookie (a GET needs no CSRF
 * token), so a whole log never sits in the page's memory.
 */
function Export() {
  const [range, setRange] = useState({ from: '', to: '' });
  return (
    <Section title="Export">
      <p class="muted">NDJSON of events with their chain entries and checkpoints: the file the offline verifier of docs/audit.md reads.</p>
      <form class="filters" aria-label="Export the audit trail" onSubmit={(e) => e.preventDefault()}>
        <Field id="export-from" label="From position (optional)"><input id="export-from" inputMode="numeric" pattern="[0-9]*" value={range.from} onInput={(e) => setRange({ ...range, from: e.currentTarget.value })} /></Field>
        <Field id="export-to" label="To position (optional)"><input id="export-to" inputMode="numeric" pattern="[0-9]*" value={range.to} onInput={(e) => setRange({ ...range, to: e.currentTarget.value })} /></Field>
        <div class="form-actions">
          <a class="button button-primary" href={withQuery('/admin/v1/audit/export', range)} download="audit-export.ndjson">Download NDJSON</a>
        </div>
      </form>
    </Section>
  );
}

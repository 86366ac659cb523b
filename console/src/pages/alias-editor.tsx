import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { useAction } from '../action.js';
import { Button, ErrorNotice, SuccessNotice } from '../components/ui.js';
import { diff } from '../diff.js';
import { shown } from '../format.js';
import type { Alias, AliasDryRun, AliasRoute, Deployment } from '../types.js';

const STRATEGIES = ['priority', 'weighted', 'least-latency', 'least-cost', 'sticky'];

/**
 * Edits an alias's strategy and routes. "Preview" asks the server for a dry run (the aggregate's decision and
 * the publication guard's checks, nothing appended) and shows its diff; "Apply" publishes exactly that, with
 * If-Match on the version previewed, so a change made meanwhile by someone else is refused, not overwritten.
 */
export function AliasEditor({ alias, deployments, onClose, onApplied }: {
  alias: Alias; deployments: Deployment[]; onClose: () => void; onApplied: () => void;
}) {
  const [strategy, setStrategy] = useState(alias.strategy);
  const [routes, setRoutes] = useState<AliasRoute[]>(alias.routes.map((route) => ({ ...route })));
  const [preview, setPreview] = useState<AliasDryRun | null>(null);
  const { busy, error, run } = useAction();
  const [applied, setApplied] = useState<number | null>(null);

  const body = () => ({ strategy, routes, policy: alias.policy, visibility: alias.visibility, contentPolicy: alias.contentPolicy });
  const path = `/admin/v1/aliases/${encodeURIComponent(alias.name)}`;
  const edit = (change: () => void) => {
    change();
    setPreview(null);
    setApplied(null);
  };
  const setRoute = (index: number, member: keyof AliasRoute, value: string) => edit(() => setRoutes((all) => all.map((route, i) => (
    i === index ? { ...route, [member]: member === 'deployment' ? value : Number(value) } : route
  ))));

  const dryRun = () => run(async () => {
    setPreview(await api<AliasDryRun>(path, { method: 'PUT', query: { dryRun: 'true' }, body: body(), headers: { 'if-match': `"${alias.version}"` } }));
  });
  const apply = () => run(async () => {
    const published = await api<Alias>(path, { method: 'PUT', body: body(), headers: { 'if-match': `"${alias.version}"` } });
    setApplied(published.aliasVersion);
    setPreview(null);
    onApplied();
  });

  const changes = preview ? diff(declared(preview.current), preview.proposed) : [];
  return (
    <form class="subpanel editor" aria-labelledby="alias-editor-title" onSubmit={(event) => { event.preventDefault(); void dryRun(); }}>
      <h3 id="alias-editor-title">{`Edit alias ${alias.name}`}</h3>
      <div class="field">
        <label for="alias-strategy">Strategy</label>
        <select id="alias-strategy" value={strategy} onChange={(event) => edit(() => setStrategy(event.currentTarget.value))}>
          {STRATEGIES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </div>
      <fieldset>
        <legend>Routes</legend>
        <table class="compact">
          <thead><tr><th scope="col">Deployment</th><th scope="col">Priority</th><th scope="col">Weight</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
          <tbody>
            {routes.map((route, index) => (
              <tr key={index}>
                <td>
                  <select aria-label={`Route ${index + 1} deployment`} value={route.deployment} onChange={(event) => setRoute(index, 'deployment', event.currentTarget.value)}>
                    {deployments.map((d) => <option key={d.id} value={d.id}>{d.id}</option>)}
                  </select>
                </td>
                <td><input aria-label={`Route ${index + 1} priority`} type="number" min={0} step={1} value={route.priority} onInput={(event) => setRoute(index, 'priority', event.currentTarget.value)} /></td>
                <td><input aria-label={`Route ${index + 1} weight`} type="number" min={0} step="any" value={route.weight} onInput={(event) => setRoute(index, 'weight', event.currentTarget.value)} /></td>
                <td>
                  <Button variant="secondary" class="button-small" disabled={routes.length <= 1} aria-label={`Remove route ${index + 1}`}
                    onClick={() => edit(() => setRoutes((all) => all.filter((_, i) => i !== index)))}>Remove</Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <Button variant="secondary" class="button-small" onClick={() => edit(() => setRoutes((all) => [...all, { deployment: deployments[0]?.id ?? '', priority: all.length, weight: 1 }]))}>Add route</Button>
      </fieldset>
      <ErrorNotice error={error} />
      {applied !== null ? <SuccessNotice>{`Published ${alias.name} v${applied}.`}</SuccessNotice> : null}
      {preview ? (
        <div class="dry-run" aria-live="polite">
          <h4>Dry run</h4>
          {preview.wouldAppend.length === 0 ? <p>Nothing would change: this is the alias as it is.</p> : (
            <>
              <p>{`Would append ${preview.wouldAppend.join(', ')} — ${alias.name} v${preview.proposed.aliasVersion}. Nothing has been changed yet.`}</p>
              <table class="diff">
                <thead><tr><th scope="col">Field</th><th scope="col">Now</th><th scope="col">After</th></tr></thead>
                <tbody>
                  {changes.map((change) => (
                    <tr key={change.field}><td><code>{change.field}</code></td><td class="diff-from">{shown(change.from)}</td><td class="diff-to">{shown(change.to)}</td></tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </div>
      ) : null}
      <div class="form-actions">
        <Button type="submit" variant="secondary" busy={busy}>Preview changes</Button>
        <Button variant="primary" busy={busy} disabled={!preview || preview.wouldAppend.length === 0} onClick={apply}>Apply</Button>
        <Button variant="secondary" onClick={onClose}>Close</Button>
      </div>
    </form>
  );
}

/** The declared members of an alias view, in the dry run's `proposed` shape (so the diff compares like with like). */
function declared(alias: Alias | null) {
  if (!alias) return null;
  const { aliasVersion, strategy, routes, policy, visibility, contentPolicy } = alias;
  return { aliasVersion, strategy, routes, policy, visibility, contentPolicy };
}

import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Button, Empty, ErrorNotice, LoadMore, Loading, PageHeader, Section, StatusBadge } from '../components/ui.js';
import { usd, when } from '../format.js';
import { readWholeList, usePagedList } from '../paged-list.js';
import { useResource } from '../resource.js';
import { canChange, type Session } from '../session.js';
import type { Alias, Deployment, PriceEntry, PriceHistory, Provider } from '../types.js';
import { AliasEditor } from './alias-editor.js';

/**
 * Providers (never their credentials), deployments with their prices and price history, aliases with routes.
 * Each table reads pages from the server and appends the next on request.
 */
export function CatalogPage({ session }: { session: Session }) {
  const providers = usePagedList<Provider>('/admin/v1/providers', {}, 'providers');
  const deployments = usePagedList<Deployment>('/admin/v1/deployments', {}, 'deployments');
  const aliases = usePagedList<Alias>('/admin/v1/aliases', {}, 'aliases');
  const [editing, setEditing] = useState<string | null>(null);
  const [prices, setPrices] = useState<string | null>(null);
  const edited = aliases.items?.find((a) => a.name === editing) ?? null;
  return (
    <>
      <PageHeader title="Catalog" />
      <Section title="Aliases">
        <ErrorNotice error={aliases.error} />
        {!aliases.items ? <Loading /> : aliases.items.length === 0 ? <Empty>No aliases are published.</Empty> : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr><th scope="col">Alias</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Strategy</th><th scope="col">Routes (priority · weight)</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
              </thead>
              <tbody>
                {aliases.items.map((alias) => (
                  <tr key={alias.name}>
                    <td><strong class="alias-name">{alias.name}</strong>{alias.problems.length ? <p class="text-bad">{alias.problems.join('; ')}</p> : null}</td>
                    <td><StatusBadge status={alias.status} /></td>
                    <td>{`v${alias.aliasVersion}`}{alias.serving && alias.serving.aliasVersion !== alias.aliasVersion ? <span class="muted">{` (serving v${alias.serving.aliasVersion})`}</span> : null}</td>
                    <td>{alias.strategy}</td>
                    <td>
                      <ul class="routes">
                        {alias.routes.map((route) => (
                          <li key={route.deployment}>
                            <span>{route.deployment}</span>
                            <span class="muted">{` · p${route.priority} · w${route.weight}`}</span>
                            <span class="weight-bar" aria-hidden="true"><span style={{ width: `${weightShare(alias, route.weight)}%` }} /></span>
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>
                      {canChange(session, 'catalog') && alias.status === 'published' ? (
                        <Button variant="secondary" class="button-small" aria-label={`Edit alias ${alias.name}`} onClick={() => setEditing(alias.name)}>Edit</Button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <LoadMore list={aliases} noun="aliases" />
        {edited ? <AliasEditorWithDeployments alias={edited} onClose={() => setEditing(null)} onApplied={aliases.reload} /> : null}
      </Section>
      <Section title="Deployments">
        <ErrorNotice error={deployments.error} />
        {!deployments.items ? <Loading /> : deployments.items.length === 0 ? <Empty>No deployments are registered.</Empty> : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr><th scope="col">Deployment</th><th scope="col">Status</th><th scope="col">Provider</th><th scope="col">Model</th><th scope="col">Capabilities</th><th scope="col" class="num">Input / 1M</th><th scope="col" class="num">Output / 1M</th><th scope="col"><span class="visually-hidden">Prices</span></th></tr>
              </thead>
              <tbody>
                {deployments.items.map((d) => (
                  <tr key={d.id}>
                    <td><strong>{d.id}</strong>{d.region ? <span class="muted">{` · ${d.region}`}</span> : null}</td>
                    <td><StatusBadge status={d.status} /></td>
                    <td>{d.provider}</td>
                    <td><code>{d.model}</code></td>
                    <td><div class="chips">{d.capabilities.map((c) => <span key={c} class="chip">{c}</span>)}</div></td>
                    <td class="num">{d.price ? usd(d.price.inputPer1M) : '—'}</td>
                    <td class="num">{d.price ? usd(d.price.outputPer1M) : '—'}</td>
                    <td>
                      <Button variant="secondary" class="button-small" aria-expanded={prices === d.id} aria-label={`Price history of ${d.id}`}
                        onClick={() => setPrices(prices === d.id ? null : d.id)}>Price history</Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <LoadMore list={deployments} noun="deployments" />
        {prices ? <PriceHistoryPanel deployment={prices} /> : null}
      </Section>
      <Section title="Providers">
        <p class="muted">Credentials are never shown here: the API holds references to them, and the console does not display even those.</p>
        <ErrorNotice error={providers.error} />
        {!providers.items ? <Loading /> : (
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Type</th><th scope="col">Region</th><th scope="col">API version</th></tr></thead>
              <tbody>
                {providers.items.map((p) => (
                  <tr key={p.id}><td><strong>{p.id}</strong></td><td><StatusBadge status={p.status} /></td><td>{p.type}</td><td>{p.region ?? '—'}</td><td>{p.apiVersion ?? '—'}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <LoadMore list={providers} noun="providers" />
      </Section>
    </>
  );
}

/** The editor offers every deployment as a route target, not only those of the pages the table shows. */
function AliasEditorWithDeployments({ alias, onClose, onApplied }: { alias: Alias; onClose: () => void; onApplied: () => void }) {
  const deployments = useResource((signal) => readWholeList<Deployment>('/admin/v1/deployments', signal), 'deployment-choices');
  if (deployments.error) return <ErrorNotice error={deployments.error} />;
  if (!deployments.data) return <Loading />;
  return <AliasEditor alias={alias} deployments={deployments.data} onClose={onClose} onApplied={onApplied} />;
}

function weightShare(alias: Alias, weight: number): number {
  const total = alias.routes.reduce((sum, route) => sum + route.weight, 0);
  return total > 0 ? (weight / total) * 100 : 0;
}

function PriceHistoryPanel({ deployment }: { deployment: string }) {
  const history = useResource((signal) => api<PriceHistory>(`/admin/v1/deployments/${encodeURIComponent(deployment)}/prices`, { signal }), deployment);
  return (
    <div class="subpanel" aria-live="polite">
      <h3>{`Price history of ${deployment}`}</h3>
      <ErrorNotice error={history.error} />
      {!history.data ? <Loading /> : history.data.history.length === 0 ? <Empty>No price was ever scheduled.</Empty> : (
        <table>
          <thead><tr><th scope="col">Version</th><th scope="col">Effective from</th><th scope="col">Status</th><th scope="col" class="num">Input / 1M</th><th scope="col" class="num">Cached input / 1M</th><th scope="col" class="num">Output / 1M</th></tr></thead>
          <tbody>
            {[...history.data.history].reverse().map((entry: PriceEntry) => (
              <tr key={entry.priceVersion}>
                <td>{`v${entry.priceVersion}`}</td><td>{when(entry.effectiveFrom)}</td><td><StatusBadge status={entry.status} /></td>
                <td class="num">{usd(entry.inputPer1M)}</td><td class="num">{usd(entry.cachedInputPer1M ?? null)}</td><td class="num">{usd(entry.outputPer1M)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

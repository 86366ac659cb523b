import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { useAction } from '../action.js';
import { Button, CopyButton, Empty, ErrorNotice, Field, LoadMore, Loading, Section, StatusBadge, SuccessNotice } from '../components/ui.js';
import { when } from '../format.js';
import { readWholeList, usePagedList } from '../paged-list.js';
import { useResource } from '../resource.js';
import type { Alias, ApiKey, IssuedKey } from '../types.js';
import { limitsText } from './access.js';

const SCOPES = ['inference', 'models:read', 'usage:read', 'admin'] as const;

/**
 * The keys of one tenant, a server page at a time: issue (the secret shown once), change the grant and
 * limits, rotate with overlap, revoke.
 */
export function KeysPanel({ tenant, writable }: { tenant: string; writable: boolean }) {
  const keys = usePagedList<ApiKey>('/admin/v1/keys', { tenant }, `keys-${tenant}`);
  const aliases = useResource((signal) => readWholeList<Alias>('/admin/v1/aliases', signal), 'aliases');
  const [secret, setSecret] = useState<IssuedKey | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const edited = keys.items?.find((k) => k.id === editing) ?? null;
  const published = (aliases.data ?? []).filter((a) => a.status === 'published').map((a) => a.name);

  const act = async (what: string, action: () => Promise<unknown>) => {
    setError(null);
    setDone(null);
    try {
      await action();
      setDone(what);
      keys.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  const revoke = (key: ApiKey) => {
    if (!window.confirm(`Revoke key ${key.id}? Every request with it is refused from now on.`)) return;
    void act(`Key ${key.id} revoked.`, () => api(`/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`, { method: 'POST', body: { reason: 'revoked from the console' } }));
  };
  const rotate = (key: ApiKey, overlapSeconds: number) => act(`Key ${key.id} rotated.`, async () => {
    setSecret(await api<IssuedKey>(`/admin/v1/keys/${encodeURIComponent(key.id)}/rotate`, { method: 'POST', body: { overlapSeconds } }));
  });

  return (
    <Section title={`API keys of ${tenant}`}>
      {secret ? <OnceShownSecret issued={secret} onDismiss={() => setSecret(null)} /> : null}
      <ErrorNotice error={error ?? keys.error} />
      {done ? <SuccessNotice>{done}</SuccessNotice> : null}
      {!keys.items ? <Loading /> : keys.items.length === 0 ? <Empty>This tenant has no keys.</Empty> : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Scopes</th><th scope="col">Aliases</th><th scope="col">Limits</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {keys.items.map((key) => (
                <tr key={key.id}>
                  {/* The API's prefix ends in its own ellipsis. The previous secret's overlap is said while it lasts. */}
                  <td><strong>{key.id}</strong><div class="muted"><code>{key.prefix}</code></div>
                    {key.status === 'active' && key.previousSecretValidUntil && Date.parse(key.previousSecretValidUntil) > Date.now()
                      ? <div class="muted small">{`previous secret valid until ${when(key.previousSecretValidUntil)}`}</div> : null}</td>
                  <td><StatusBadge status={key.status} /></td>
                  <td><div class="chips">{key.scopes.map((s) => <span key={s} class="chip">{s}</span>)}</div></td>
                  <td>{key.aliases.length ? key.aliases.join(', ') : <span class="muted">all public</span>}</td>
                  <td>{limitsText(key.limits)}</td>
                  <td>{key.expiresAt ? when(key.expiresAt) : <span class="muted">never</span>}</td>
                  <td class="actions">
                    {writable && key.status === 'active' ? (
                      <>
                        <Button variant="secondary" class="button-small" aria-label={`Change key ${key.id}`} onClick={() => setEditing(editing === key.id ? null : key.id)}>Change</Button>
                        <RotateButton keyId={key.id} onRotate={(overlap) => rotate(key, overlap)} />
                        <Button variant="danger" class="button-small" aria-label={`Revoke key ${key.id}`} onClick={() => revoke(key)}>Revoke</Button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore list={keys} noun="keys" />
      {edited ? (
        <GrantEditor key={editing} apiKey={edited} aliases={published}
          onSaved={() => { setEditing(null); setDone(`Key ${editing} changed.`); keys.reload(); }} onCancel={() => setEditing(null)} />
      ) : null}
      {writable ? <IssueKey tenant={tenant} aliases={published} onIssued={(issued) => { setSecret(issued); keys.reload(); }} /> : null}
    </Section>
  );
}

/** The secret of a new or rotated key: shown this once (the server keeps only its hash), never stored by the page. */
function OnceShownSecret({ issued, onDismiss }: { issued: IssuedKey; onDismiss: () => void }) {
  return (
    <div class="secret" role="region" aria-label="New key secret">
      <p><strong>{`Secret of ${issued.id}`}</strong> — {issued.notice}</p>
      {issued.previousValidUntil ? <p class="small">{`The previous secret keeps working until ${when(issued.previousValidUntil)}.`}</p> : null}
      <div class="secret-row">
        <label for="issued-secret" class="visually-hidden">Key secret</label>
        <input id="issued-secret" class="mono" readOnly value={issued.key} onFocus={(event) => event.currentTarget.select()} />
        <CopyButton value={issued.key} label="Copy secret" />
        <Button variant="secondary" onClick={onDismiss}>I have stored it</Button>
      </div>
    </div>
  );
}

function RotateButton({ keyId, onRotate }: { keyId: string; onRotate: (overlapSeconds: number) => void }) {
  const [open, setOpen] = useState(false);
  const [overlap, setOverlap] = useState('3600');
  if (!open) return <Button variant="secondary" class="button-small" aria-label={`Rotate key ${keyId}`} onClick={() => setOpen(true)}>Rotate</Button>;
  return (
    <form class="rotate" onSubmit={(event) => { event.preventDefault(); setOpen(false); onRotate(Number(overlap)); }}>
      <label for={`overlap-${keyId}`}>Old secret valid for (s)</label>
      <input id={`overlap-${keyId}`} type="number" min={0} max={2592000} value={overlap} onInput={(e) => setOverlap(e.currentTarget.value)} />
      <Button type="submit" class="button-small">Rotate now</Button>
      <Button variant="secondary" class="button-small" onClick={() => setOpen(false)}>Cancel</Button>
    </form>
  );
}

interface GrantForm { id: string; scopes: string[]; aliases: string[]; rpm: string; tpm: string; maxConcurrency: string; expiresAt: string }

function grantBody(form: GrantForm) {
  const limit = (value: string) => (value === '' ? null : Number(value));
  return {
    scopes: form.scopes,
    aliases: form.aliases,
    limits: { rpm: limit(form.rpm), tpm: limit(form.tpm), maxConcurrency: limit(form.maxConcurrency) },
    // The field is read as UTC, as every time in the console is shown.
    expiresAt: form.expiresAt ? new Date(`${form.expiresAt}:00Z`).toISOString() : null,
  };
}

function GrantFields({ form, setForm, aliases, prefix }: { form: GrantForm; setForm: (form: GrantForm) => void; aliases: string[]; prefix: string }) {
  const toggle = (list: string[], value: string) => (list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);
  return (
    <>
      <fieldset class="checks">
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label key={scope}><input type="checkbox" checked={form.scopes.includes(scope)} onChange={() => setForm({ ...form, scopes: toggle(form.scopes, scope) })} />{` ${scope}`}</label>
        ))}
      </fieldset>
      <fieldset class="checks">
        <legend>Aliases (none ticked: every public alias)</legend>
        {aliases.map((alias) => (
          <label key={alias}><input type="checkbox" checked={form.aliases.includes(alias)} onChange={() => setForm({ ...form, aliases: toggle(form.aliases, alias) })} />{` ${alias}`}</label>
        ))}
      </fieldset>
      <div class="row">
        <Field id={`${prefix}-rpm`} label="Requests / minute"><input id={`${prefix}-rpm`} type="number" min={1} value={form.rpm} onInput={(e) => setForm({ ...form, rpm: e.currentTarget.value })} /></Field>
        <Field id={`${prefix}-tpm`} label="Tokens / minute"><input id={`${prefix}-tpm`} type="number" min={1} value={form.tpm} onInput={(e) => setForm({ ...form, tpm: e.currentTarget.value })} /></Field>
        <Field id={`${prefix}-concurrency`} label="Concurrent requests"><input id={`${prefix}-concurrency`} type="number" min={1} value={form.maxConcurrency} onInput={(e) => setForm({ ...form, maxConcurrency: e.currentTarget.value })} /></Field>
        <Field id={`${prefix}-expires`} label="Expires (UTC, optional)"><input id={`${prefix}-expires`} type="datetime-local" value={form.expiresAt} onInput={(e) => setForm({ ...form, expiresAt: e.currentTarget.value })} /></Field>
      </div>
    </>
  );
}

function IssueKey({ tenant, aliases, onIssued }: { tenant: string; aliases: string[]; onIssued: (issued: IssuedKey) => void }) {
  const empty: GrantForm = { id: '', scopes: ['inference', 'models:read'], aliases: [], rpm: '', tpm: '', maxConcurrency: '', expiresAt: '' };
  const [form, setForm] = useState<GrantForm>(empty);
  const { busy, error, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const issued = await api<IssuedKey>('/admin/v1/keys', { method: 'POST', body: { tenant, ...(form.id ? { id: form.id } : {}), ...grantBody(form) } });
      setForm(empty);
      onIssued(issued);
    });
  };
  return (
    <details class="subpanel">
      <summary>Issue a key</summary>
      <form class="stack" onSubmit={submit}>
        <Field id="new-key-id" label="Key id (optional; generated when empty)">
          <input id="new-key-id" pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" value={form.id} onInput={(e) => setForm({ ...form, id: e.currentTarget.value })} />
        </Field>
        <GrantFields form={form} setForm={setForm} aliases={aliases} prefix="new-key" />
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy}>Issue key</Button>
      </form>
    </details>
  );
}

function GrantEditor({ apiKey, aliases, onSaved, onCancel }: { apiKey: ApiKey; aliases: string[]; onSaved: () => void; onCancel: () => void }) {
  const [form, setForm] = useState<GrantForm>({
    id: apiKey.id, scopes: apiKey.scopes, aliases: apiKey.aliases,
    rpm: String(apiKey.limits.rpm ?? ''), tpm: String(apiKey.limits.tpm ?? ''), maxConcurrency: String(apiKey.limits.maxConcurrency ?? ''),
    expiresAt: apiKey.expiresAt ? apiKey.expiresAt.slice(0, 16) : '',
  });
  const { busy, error, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      await api(`/admin/v1/keys/${encodeURIComponent(apiKey.id)}`, { method: 'PATCH', body: grantBody(form), headers: { 'if-match': `"${apiKey.version}"` } });
      onSaved();
    });
  };
  return (
    <form class="subpanel stack" onSubmit={submit} aria-label={`Change key ${apiKey.id}`}>
      <h3>{`Grant and limits of ${apiKey.id}`}</h3>
      <GrantFields form={form} setForm={setForm} aliases={aliases} prefix="edit-key" />
      <ErrorNotice error={error} />
      <div class="form-actions">
        <Button type="submit" busy={busy}>Save</Button>
        <Button variant="secondary" onClick={onCancel}>Cancel</Button>
      </div>
    </form>
  );
}

import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { href, onLinkClick } from '../router.js';

/** Small building blocks every page uses; all text goes through JSX text nodes (escaped by Preact). */

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </header>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class="card" aria-labelledby={id}>
      <div class="card-header">
        <h2 id={id}>{title}</h2>
        {actions ? <div class="card-actions">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}

export function Link({ to, children, class: className }: { to: string; children: ComponentChildren; class?: string }) {
  return <a href={href(to)} class={className} onClick={(event) => onLinkClick(event, to)}>{children}</a>;
}

export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError ? error.code : null;
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    <div class="notice notice-error" role="alert">
      <strong>{code === 'role_forbidden' ? 'Not allowed for your role' : 'Error'}</strong>
      {code ? <code class="notice-code">{code}</code> : null}
      <p>{message}</p>
      {fields.length ? (
        <ul>{fields.map((field) => <li key={field.path}><code>{field.path || '(body)'}</code> {field.message}</li>)}</ul>
      ) : null}
    </div>
  );
}

export function SuccessNotice({ children }: { children: ComponentChildren }) {
  return <div class="notice notice-success" role="status">{children}</div>;
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return <p class="muted" role="status" aria-live="polite">{label}</p>;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function StatusBadge({ status }: { status: string }) {
  const tone = /^(active|published|ok|closed|success|in-effect|completed|ready|running)$/.test(status) ? 'good'
    : /^(revoked|retired|error|failed|failing|open|rejected|halted|disabled|expired|suspended)$/.test(status) ? 'bad'
      : /^(half-open|scheduled|incomplete|pending|lagging|degraded|behind|cancelled|failed_partial)$/.test(status) ? 'warn' : 'neutral';
  return <span class={`badge badge-${tone}`}>{status}</span>;
}

export function Field({ label, hint, children, id }: { label: string; hint?: string; children: ComponentChildren; id: string }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint ? <small id={`${id}-hint`} class="hint">{hint}</small> : null}
    </div>
  );
}

export function Progress({ value, label }: { value: number | null; label: string }) {
  if (value === null) return <span class="muted">no budget</span>;
  const clamped = Math.max(0, Math.min(100, value));
  const tone = value >= 100 ? 'bad' : value >= 80 ? 'warn' : 'good';
  return (
    <div class="progress-wrap">
      <div class={`progress progress-${tone}`} role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(clamped)}>
        <div class="progress-bar" style={{ width: `${clamped}%` }} />
      </div>
      <span class="progress-value">{`${value.toLocaleString('en-US', { maximumFractionDigits: 1 })}%`}</span>
    </div>
  );
}

/** Copies a value to the clipboard; says so for screen readers too. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
    setTimeout(() => setCopied('idle'), 2500);
  };
  return (
    <button type="button" class="button button-secondary" onClick={copy}>
      {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed — select the text' : label}
      <span class="visually-hidden" aria-live="polite">{copied === 'copied' ? 'Copied to the clipboard' : ''}</span>
    </button>
  );
}

export function Button(props: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'danger'; busy?: boolean }) {
  const { variant = 'primary', busy, children, class: className, ...rest } = props;
  return (
    <button type="button" {...rest} class={`button button-${variant} ${className ?? ''}`} disabled={busy || rest.disabled} aria-busy={busy ? 'true' : undefined}>
      {children}
    </button>
  );
}

/** A definition list of label → value rows. */
export function Facts({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {rows.map(([label, value]) => (
        <div key={label} class="fact">
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Pager({ onNext, onFirst, hasNext, atFirst }: { onNext: () => void; onFirst: () => void; hasNext: boolean; atFirst: boolean }) {
  return (
    <nav class="pager" aria-label="Pages">
      <Button variant="secondary" onClick={onFirst} disabled={atFirst}>First page</Button>
      <Button variant="secondary" onClick={onNext} disabled={!hasNext}>Next page</Button>
    </nav>
  );
}

/**
 * Under a server-paged table: how many rows are shown and, while the server has more, a button that reads
 * the next page and appends it (rows already shown, and a selection among them, stay as they are).
 */
export function LoadMore({ list, noun }: { list: { items: unknown[] | null; pages: number; hasMore: boolean; loading: boolean; loadMore: () => void }; noun: string }) {
  if (!list.items || (!list.hasMore && list.pages < 2)) return null;
  return (
    <nav class="pager" aria-label={`More ${noun}`}>
      <span class="muted small" role="status">{list.hasMore ? `${list.items.length} ${noun} shown; there are more.` : `All ${list.items.length} ${noun} shown.`}</span>
      {list.hasMore ? <Button variant="secondary" busy={list.loading} onClick={list.loadMore}>{`Load more ${noun}`}</Button> : null}
    </nav>
  );
}

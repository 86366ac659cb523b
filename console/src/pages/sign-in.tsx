import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useAction } from '../action.js';
import { Button, ErrorNotice, Field } from '../components/ui.js';
import { type Session, type SignInConfig, signInConfig, signInWithToken } from '../session.js';

/** Why an OIDC sign-in came back refused (`/console/?signInError=<code>` from the callback). */
const OIDC_ERRORS: Record<string, string> = {
  no_role: 'Your identity provider signed you in, but your account has no console role. Ask an administrator to map one.',
  invalid_id_token: 'The identity provider’s answer could not be verified (audience, signature or expiry). Try again.',
  invalid_state: 'The sign-in took too long, was started in another tab or was already used. Start again.',
  access_denied: 'The identity provider did not sign you in.',
  issuer_error: 'The identity provider could not be reached or answered in error. Try again later.',
  oidc_not_configured: 'Single sign-on is not configured on this gateway.',
};

export function SignInPage({ onSignedIn, startupError }: { onSignedIn: (session: Session) => void; startupError: unknown }) {
  const [config, setConfig] = useState<SignInConfig | null>(null);
  const [token, setToken] = useState('');
  const { busy, error, setError, run } = useAction(startupError);
  const returned = new URLSearchParams(window.location.search).get('signInError');
  useEffect(() => {
    document.title = 'Sign in · Switchyard console';
    signInConfig().then(setConfig, setError);
  }, []);
  const submit = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      let session: Session;
      try {
        session = await signInWithToken(token);
      } catch (failure) {
        if (failure instanceof ApiError && failure.status === 401) throw new Error('That admin token was not accepted.');
        if (failure instanceof ApiError && failure.status === 429) throw new Error('Too many sign-in attempts from this address. Wait a minute and try again.');
        throw failure;
      }
      setToken('');
      if (returned) window.history.replaceState(null, '', window.location.pathname);
      onSignedIn(session);
    });
  };
  return (
    <main class="sign-in" id="main">
      <div class="sign-in-card">
        <p class="brand brand-large"><span class="brand-mark" aria-hidden="true">⇄</span> Switchyard</p>
        <h1>Sign in to the console</h1>
        {returned ? <ErrorNotice error={new Error(OIDC_ERRORS[returned] ?? `Single sign-on did not complete (${returned}).`)} /> : null}
        <ErrorNotice error={error} />
        {config?.signIn.oidc ? (
          <>
            <a class="button button-primary button-block" href="/console/api/oidc/start">{`Sign in with ${config.signIn.oidc.name}`}</a>
            <p class="divider"><span>or use an admin token</span></p>
          </>
        ) : null}
        <form onSubmit={submit} class="stack">
          <Field id="admin-token" label="Admin token" hint="ADMIN_TOKEN, or the token generated on the first start; it is sent once and never stored by this page.">
            <input id="admin-token" name="token" type="password" autoComplete="current-password" required value={token}
              aria-describedby="admin-token-hint" onInput={(event) => setToken(event.currentTarget.value)} />
          </Field>
          <Button type="submit" busy={busy} class="button-block">{busy ? 'Signing in…' : 'Sign in'}</Button>
        </form>
      </div>
    </main>
  );
}

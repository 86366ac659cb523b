import { useEffect, useState } from 'preact/hooks';
import { whenSessionLost } from './api.js';
import { ErrorNotice, Link, Loading } from './components/ui.js';
import { AccessPage } from './pages/access.js';
import { AuditPage } from './pages/audit.js';
import { CatalogPage } from './pages/catalog.js';
import { OverviewPage } from './pages/overview.js';
import { PlaygroundPage } from './pages/playground.js';
import { RequestsPage } from './pages/requests.js';
import { RequestStoryPage } from './pages/request-story.js';
import { SignInPage } from './pages/sign-in.js';
import { SpendPage } from './pages/spend.js';
import { navigate, useLocation } from './router.js';
import { currentSession, type Session, signOut } from './session.js';

const PAGES = [
  { path: '/', label: 'Overview' },
  { path: '/catalog', label: 'Catalog' },
  { path: '/access', label: 'Access' },
  { path: '/requests', label: 'Requests' },
  { path: '/spend', label: 'Spend' },
  { path: '/audit', label: 'Audit' },
  { path: '/playground', label: 'Playground' },
] as const;

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    whenSessionLost(() => setSession(null));
    currentSession().then(setSession, (failure) => {
      setError(failure);
      setSession(null);
    });
  }, []);
  if (session === undefined) return <main class="centered"><Loading label="Opening the console…" /></main>;
  if (session === null) return <SignInPage onSignedIn={setSession} startupError={error} />;
  return <Shell session={session} onSignedOut={() => setSession(null)} />;
}

function Shell({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const location = useLocation();
  const section = `/${location.path.split('/')[1] ?? ''}`;
  const title = PAGES.find((page) => page.path === section)?.label ?? 'Not found';
  useEffect(() => {
    document.title = `${title} · Switchyard console`;
  }, [title]);
  const leave = async () => {
    try {
      await signOut();
    } finally {
      onSignedOut();
      navigate('/', { replace: true });
    }
  };
  return (
    <div class="shell">
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <span class="brand" aria-label="Switchyard console">
          <span class="brand-mark" aria-hidden="true">⇄</span> Switchyard
        </span>
        <nav aria-label="Console" class="nav">
          <ul>
            {PAGES.map((page) => (
              <li key={page.path}>
                <Link to={page.path} class={section === page.path ? 'active' : undefined}>
                  <span aria-current={section === page.path ? 'page' : undefined}>{page.label}</span>
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="who-user" title={session.user}>{session.user}</span>
          <span class="badge badge-neutral">{session.role}</span>
          <button type="button" class="button button-secondary button-small" onClick={leave}>Sign out</button>
        </div>
      </header>
      <main id="main" class="content" tabIndex={-1}>
        <Page path={location.path} query={location.query} session={session} />
      </main>
    </div>
  );
}

function Page({ path, query, session }: { path: string; query: URLSearchParams; session: Session }) {
  const [, section, rest] = /^\/([^/]*)\/?(.*)$/.exec(path) ?? [];
  switch (section) {
    case '': return <OverviewPage />;
    case 'catalog': return <CatalogPage session={session} />;
    case 'access': return <AccessPage session={session} />;
    case 'requests': return rest ? <RequestStoryPage requestId={decodeURIComponent(rest)} /> : <RequestsPage query={query} />;
    case 'spend': return <SpendPage />;
    case 'audit': return <AuditPage />;
    case 'playground': return <PlaygroundPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <ErrorNotice error={new Error(`There is no console page at ${path}.`)} />
          <Link to="/">Back to the overview</Link>
        </>
      );
  }
}

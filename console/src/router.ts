import { useEffect, useState } from 'preact/hooks';

/** Client-side routes under /console/ (the gateway answers index.html for every one of them). */
const BASE = '/console';

export interface Location {
  /** The path below /console, e.g. `/requests/0193…`; `/` for the overview. */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function navigate(to: string, { replace = false } = {}): void {
  const url = `${BASE}${to}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((listener) => listener());
  window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return location;
}

export function href(to: string): string {
  return `${BASE}${to}`;
}

/** A link that navigates in the page (and still opens in a new tab with the modifier keys). */
export function onLinkClick(event: MouseEvent, to: string): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(to);
}

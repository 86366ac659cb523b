/**
 * Every credential value this process holds, so that text from outside (a provider's error message)
 * can be scrubbed of them by exact match. Secret resolution feeds it; so do the gateway's own settings
 * (admin token, the passwords inside DATABASE_URL, REDIS_URL and CLICKHOUSE_URL).
 *
 * Besides the value itself it keeps the forms in which a value travels when an upstream echoes a
 * request back: base64 and base64url (at each of the three byte alignments, so `Basic base64(user:key)`
 * and a key inside a longer encoded blob are caught too), URL and JSON escaping, and hex.
 */

/** Shorter values cannot be matched without destroying ordinary words (and are no credential anyway). */
const MIN_SECRET_LENGTH = 6;
/** Derived forms shorter than this are dropped: a 5-character base64 core matches too much text. */
const MIN_FORM_LENGTH = 8;
/** A bound on the registry: keys rotate, but a process never holds anywhere near this many. */
const MAX_FORMS = 20_000;

const forms = new Set<string>();
let ordered: string[] | null = null;

export function rememberSecret(value: string | null | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  const before = forms.size;
  for (const form of formsOf(value)) {
    if (forms.size >= MAX_FORMS) break;
    forms.add(form);
  }
  // Composite secrets (Bedrock's ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]) travel in parts.
  const parts = value.split(':');
  if (parts.length > 1) {
    for (const part of parts) {
      if (part.length < MIN_FORM_LENGTH) continue;
      for (const form of formsOf(part)) if (forms.size < MAX_FORMS) forms.add(form);
    }
  }
  if (forms.size !== before) ordered = null;
}

/** The password (and a username that looks like a token) of a service URL such as a DSN. */
export function rememberUrlCredentials(url: string | null | undefined): void {
  if (!url) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return;
  }
  if (parsed.password) {
    rememberSecret(parsed.password);
    rememberSecret(safeDecode(parsed.password));
  }
  // `https://token@host` puts the secret where a user name would be. A plain account name with no password
  // (`postgres://postgres@host`, trust authentication) is not one: remembering it would scrub the word
  // `postgres` out of every provider error.
  if (parsed.username && !parsed.password) {
    const username = safeDecode(parsed.username);
    if (looksLikeToken(username)) rememberSecret(username);
  }
}

/** Long, or letters mixed with digits: the shape of a generated credential, not of an account name. */
function looksLikeToken(value: string): boolean {
  return value.length >= 20 || (value.length >= 8 && /\d/.test(value) && /[A-Za-z]/.test(value));
}

/** Every known form, longest first (so a longer form is replaced before a shorter one inside it). */
export function knownSecretForms(): readonly string[] {
  ordered ??= [...forms].sort((a, b) => b.length - a.length);
  return ordered;
}

function formsOf(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out = new Set<string>([value]);
  out.add(encodeURIComponent(value));
  out.add(JSON.stringify(value).slice(1, -1));
  out.add(bytes.toString('hex'));
  for (const core of base64Cores(bytes)) {
    out.add(core);
    out.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...out].filter((form) => form.length >= MIN_FORM_LENGTH || form === value);
}

/**
 * The base64 characters that depend only on the secret's bytes, for each of the three offsets at which
 * the secret can start inside a longer encoded text. Characters at the edges also carry bits of the
 * neighbouring bytes, so they are left out.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64').replace(/=+$/, '');
    const first = Math.ceil((8 * offset) / 6);
    const last = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = encoded.slice(first, last);
    if (core.length >= MIN_FORM_LENGTH) cores.push(core);
  }
  return cores;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

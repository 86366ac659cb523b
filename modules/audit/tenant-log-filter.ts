/**
 * Which events of the log are about one tenant, as SQL over the log itself: its tenant stream (limits,
 * budget, suspension, budget alerts), the streams of every key ever issued in it, and the request streams
 * of those keys (every request event carries `key:<key id>` as its actor, and a key never moves to another
 * tenant). The ownership is read from ApiKeyIssued in the same statement as the page, so a key issued while a
 * tenant admin pages through the log is never missed, as a list of keys taken beforehand could miss it.
 *
 * `row` is the alias of an `events` row with `stream_id` and `metadata`; `tenant` the SQL parameter.
 */
export function aboutTenantSql(row: string, tenant: string): string {
  const keysOf = (prefix: string) =>
    `SELECT '${prefix}' || (k.data->>'keyId') FROM events k WHERE k.event_type = 'ApiKeyIssued' AND k.data->>'tenantId' = ${tenant}`;
  return `(${row}.stream_id = 'tenant-' || ${tenant}
    OR ${row}.stream_id IN (${keysOf('apikey-')})
    OR (starts_with(${row}.stream_id, 'request-') AND ${row}.metadata->>'actor' IN (${keysOf('key:')})))`;
}

/** Parses `olderThan`: a duration (`90s`, `15m`, `2h`, `7d`, or plain seconds) or an ISO-8601 instant. */
export function purgeCutoff(olderThan: string, now: number): number | null {
  const duration = /^(\d{1,9})(s|m|h|d)?$/.exec(olderThan);
  if (duration) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(duration[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
    return now - Number(duration[1]) * unit;
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(olderThan)) return null;
  const instant = Date.parse(olderThan);
  return Number.isNaN(instant) ? null : instant;
}

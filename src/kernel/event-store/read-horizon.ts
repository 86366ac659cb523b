/**
 * The read horizon of the log, as one SQL scalar expression (an xid8): the oldest transaction of this
 * database still in flight, or the snapshot's xmax when none is. Events of transactions below it are all
 * committed or gone, so a reader that stops below it reads in commit order without gaps; one that
 * commits late (even with a lower global_position) is read once it commits.
 *
 * Transactions of other databases on the same server can never write to this log, so they do not hold
 * it back: a long batch job next door must not stall revocations here, nor hide a change from the audit
 * listing that the projections have already applied. A transaction whose database cannot be seen counts
 * as ours. Every gap-free reader uses this one definition, so they agree on what is readable.
 */
export const READ_HORIZON_SQL = `(SELECT coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(snap.s) AS x
      WHERE NOT EXISTS (
        SELECT 1 FROM pg_stat_activity a
        WHERE a.backend_xid IS NOT NULL AND a.datid IS NOT NULL
          AND a.datid <> (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
          AND a.backend_xid::text = (x::text::numeric % 4294967296)::text)),
    pg_snapshot_xmax(snap.s))
  FROM (SELECT pg_current_snapshot() AS s) AS snap)`;

import { isoWithMicros, parseIsoInstant } from "../../iso-time.js";
import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { decodeCursorParts, encodeCursorParts, type Page, pageLimit } from "../shared/paging.js";
import { onlyKeys } from "../../option-keys.js";
import { isUuid, textFilter } from "../shared/sql.js";
import { Params, type Tables } from "../shared/tables.js";
import { isRunId } from "./run-get.js";
import { RUN_OUTCOMES, type RunOutcome, runSummaryJson, type RunSummary } from "./run-views.js";

export interface ListRunsQuery {
  readonly job?: string | undefined;
  readonly outcome?: RunOutcome | undefined;
  /** All runs of one job (its attempts, and those of its replays). */
  readonly jobId?: string | undefined;
  readonly correlationId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  /** Runs that finished at or after this time (ISO 8601). */
  readonly since?: string | undefined;
  /** Runs that finished before this time (ISO 8601). */
  readonly until?: string | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

const invalid = (field: string, message: string) => new JobsError("invalid_options", message, { field });

// Rows get their ids in the order their statements insert them, and finished_at is the
// statement's start: the two can disagree by as long as a statement runs. A time bound
// becomes an id bound found this much further out, and the exact filter does the rest.
const SLACK = "interval '1 minute'";

/**
 * The first id whose row (or the next row after it) finished at or after `at`: a binary
 * search over ids, one primary-key probe per step (about 25 for ten million rows), so a
 * time range costs no index of its own on a table every run writes to.
 */
const firstIdAt = (runs: string, at: string) => `(
  WITH RECURSIVE b(lo, hi) AS (
    SELECT coalesce((SELECT min(id) FROM ${runs}), 1), coalesce((SELECT max(id) FROM ${runs}), 0) + 1
    UNION ALL
    SELECT CASE WHEN p.before THEN (b.lo + b.hi) / 2 + 1 ELSE b.lo END,
           CASE WHEN p.before THEN b.hi ELSE (b.lo + b.hi) / 2 END
    FROM b CROSS JOIN LATERAL (
      SELECT coalesce((SELECT finished_at < ${at} FROM ${runs} WHERE id >= (b.lo + b.hi) / 2 ORDER BY id LIMIT 1), false) AS before) p
    WHERE b.lo < b.hi)
  SELECT min(lo) FROM b WHERE lo >= hi)`;

/** The most runs one page of succeeded runs reads (see `succeededRuns`). */
const SUCCEEDED_SCAN = 4_000;

/**
 * Succeeded runs have no index of their own (they are most of the table, and every index is paid by
 * every run): a page reads the runs the other filters match, newest first, keeping the succeeded
 * ones, and stops at its limit or after `SUCCEEDED_SCAN` runs. Where failures crowd them out (a job
 * failing a million times), the page may hold fewer than its limit, even none, with a cursor to read
 * on from where it stopped: its cost stays bounded however long the history is (it read every newer
 * failure to fill a page). The scan's last run comes back too, so one statement says where it stopped.
 */
const succeededRuns = async (db: Db, t: Tables, p: Params, where: string[], order: string, limit: number): Promise<Page<RunSummary>> => {
  const { rows } = await db.query<{ v: RunSummary; id: string; succeeded: boolean; last: boolean }>(
    `SELECT ${runSummaryJson("r")} AS v, r.id::text AS id, w.outcome = 'succeeded' AS succeeded, w.n = ${SUCCEEDED_SCAN} AS last
     FROM (SELECT id, outcome, n FROM (
             SELECT s.id, s.outcome, row_number() OVER (ORDER BY s.id DESC) AS n
             FROM (SELECT r.id, r.outcome FROM ${t.runs} r WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ${SUCCEEDED_SCAN}) s) x
           WHERE outcome = 'succeeded' OR n = ${SUCCEEDED_SCAN} ORDER BY id DESC LIMIT ${p.add(limit + 1)}) w
     JOIN ${t.runs} r ON r.id = w.id
     ORDER BY r.id DESC`,
    p.values,
  );
  const hits = rows.filter((r) => r.succeeded);
  const items = hits.slice(0, limit);
  const last = items[items.length - 1];
  if (hits.length > limit && last) return { items: items.map((r) => r.v), nextCursor: encode(last.id) };
  // A page short of its limit with runs left unread reads on from where the scan stopped.
  const edge = rows.find((r) => r.last);
  return { items: items.map((r) => r.v), nextCursor: edge ? encode(edge.id) : null };
};

const encode = (id: string) => encodeCursorParts(["run", id]);

const decode = (cursor: string): string => {
  const [tag, id] = decodeCursorParts(cursor, 2, 100);
  if (tag !== "run" || !isRunId(id)) throw invalid("cursor", "cursor is not one this API returned");
  return id;
};

const instant = (value: string | undefined, field: string): string | undefined => {
  if (value === undefined) return undefined;
  const at = typeof value === "string" ? parseIsoInstant(value) : undefined;
  // Years 1970-9999, as for runAt: what PostgreSQL and every driver round-trip.
  if (at === undefined || at.ms < 0 || at.ms >= 253_402_300_800_000) throw invalid(field, `${field} must be an ISO 8601 time such as 2026-12-01T09:30:00Z`);
  // To the microsecond: `until` a run's own finishedAt must leave that run out and keep one a few microseconds earlier.
  return isoWithMicros(at);
};

/**
 * Runs, newest first, keyset-paginated on their id, filtered by job, outcome, job id,
 * correlation id, idempotency key and a finishing-time range. Each filter has an index in
 * id order (failures their own, small, partial ones; succeeded runs are most of the table,
 * so the primary key finds them at once); a time range becomes an id range. So a page
 * reads about a page of rows however long the history is. Throws `invalid_options` for a
 * bad filter or cursor.
 */
const RUN_FILTERS: ReadonlyArray<keyof ListRunsQuery> = ["job", "outcome", "jobId", "correlationId", "idempotencyKey", "since", "until", "limit", "cursor"];

export const listRuns = async (db: Db, t: Tables, query: ListRunsQuery = {}): Promise<Page<RunSummary>> => {
  onlyKeys(query, RUN_FILTERS, "filter");
  const limit = pageLimit(query.limit);
  const p = new Params();
  const where: string[] = [];
  const job = textFilter(query.job, "job");
  const outcome = query.outcome;
  if (outcome !== undefined && !RUN_OUTCOMES.includes(outcome)) throw invalid("outcome", `outcome must be one of ${RUN_OUTCOMES.join(", ")}`);
  if (query.jobId !== undefined && !isUuid(query.jobId)) throw invalid("jobId", "jobId must be a job id (a UUID)");
  const correlationId = textFilter(query.correlationId, "correlationId");
  const idempotencyKey = textFilter(query.idempotencyKey, "idempotencyKey");
  const since = instant(query.since, "since");
  const until = instant(query.until, "until");
  const cursor = query.cursor !== undefined ? decode(query.cursor) : undefined;
  // Outcomes are a fixed list, written into the text so the planner sees which index holds them.
  const failed = outcome !== undefined && outcome !== "succeeded" ? `'${outcome}'` : undefined;
  if (failed !== undefined) where.push(`r.outcome <> 'succeeded'`);
  if (query.jobId !== undefined) where.push(`r.job_id = ${p.add(query.jobId)}::uuid`);
  // Filters with an index in id order, the narrowest first. A page is read along the first one's index
  // (with the outcome, the job's: their index has both), none for a job id (its few runs have their own).
  const keyed = ([["r.idempotency_key", idempotencyKey], ["r.correlation_id", correlationId], ["r.job_name", job], ["r.outcome", failed]] as const)
    .flatMap(([c, v]) => (v === undefined ? [] : [[c, c === "r.outcome" ? v : p.add(v)] as const]));
  const lead = query.jobId !== undefined ? [] : keyed[0]?.[0] === "r.job_name" ? keyed : keyed.slice(0, 1);
  for (const [c, v] of keyed) where.push(lead.some((l) => l[0] === c) ? `${c} IS NOT NULL` : `${c} = ${v}`);
  // The id range: from a time range (found by binary search), and below the cursor.
  let from = "0";
  let below = "9223372036854775807";
  if (since !== undefined) {
    const at = p.add(since);
    where.push(`r.finished_at >= ${at}::timestamptz`);
    from = firstIdAt(t.runs, `${at}::timestamptz - ${SLACK}`);
  }
  if (until !== undefined) {
    const at = p.add(until);
    where.push(`r.finished_at < ${at}::timestamptz`);
    below = firstIdAt(t.runs, `${at}::timestamptz + ${SLACK}`);
  }
  if (cursor !== undefined) below = `least(${p.add(cursor)}::bigint, ${below})`;
  // The filter's values and the id range as one range of its index's keys: a row comparison bounds the scan
  // and, unlike an equality, leaves an order the primary key cannot give, so the planner never walks the
  // primary key past every newer run of other jobs for this filter's. (IS NOT NULL says what a key's
  // partial index holds: the planner does not read it from a row comparison.)
  const cols = [...lead.map((l) => l[0]), "r.id"];
  const vals = lead.map((l) => l[1]);
  where.push(`(${cols}) >= (${[...vals, from]})`, `(${cols}) < (${[...vals, below]})`);
  const order = cols.map((c) => `${c} DESC`).join();
  if (outcome === "succeeded") return succeededRuns(db, t, p, where, order, limit);
  const take = p.add(limit + 1);
  const { rows } = await db.query<{ v: RunSummary; id: string }>(
    `SELECT ${runSummaryJson("r")} AS v, r.id::text AS id
     FROM (SELECT * FROM ${t.runs} r WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ${take}) r
     ORDER BY r.id DESC`,
    p.values,
  );
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items: items.map((r) => r.v), nextCursor: rows.length > limit && last ? encode(last.id) : null };
};

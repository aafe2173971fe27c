import { dueHead, type Fragment } from "./fragments.js";
import { storedCursorSql } from "./flow-cursor.js";
import type { Params, Tables } from "../shared/tables.js";
import { MAX_CONCURRENCY } from "../../terms.js";

export interface ClaimInput {
  readonly limit: number;
  /** The token this claim mints; every later write to these rows is fenced on it. */
  readonly owner: string;
  readonly leaseMs: number;
  /** Flow control; without it, no job's limits apply (keyed rows are admitted freely). */
  readonly flow?: ClaimFlow;
  /**
   * Where the tick's previous unkeyed claim ended (see `DispatchHint`): this claim takes jobs of a
   * higher priority first, then those after it in dispatch order, and starts at the head of the
   * index only for what those two leave of its limit.
   */
  readonly after?: DispatchPosition;
}

/** A job's place in dispatch order (`priority DESC, run_at, id`); `runAt` is the database's text, to the microsecond. */
export interface DispatchPosition {
  readonly priority: number;
  readonly runAt: string;
  readonly id: string;
}

/** The words of a platform's refusal (a Worker's subrequest limit), as a run's last error holds them. */
export const PLATFORM_REFUSAL = "Too many subrequests";

export interface ClaimedRow {
  readonly id: string;
  readonly job_name: string;
  readonly payload: unknown;
  readonly attempt: number;
  readonly max_attempts: number;
  readonly priority: number;
  readonly correlation_id: string | null;
  readonly idempotency_key: string | null;
  readonly run_at: string;
  /** How long ago the job was enqueued, when claimed, by the database's clock (an app's clock may be off by minutes). */
  readonly age_ms: number;
  /** Its last run was refused by the platform (see settlement.ts): a second refusal in a row counts as a failure. */
  readonly refused_before: boolean;
  /** The W3C trace context stored at enqueue (see `Observer.traceparent`): the run's span links to it. */
  readonly traceparent: string | null;
}

/** The claim's flow control: the limits of the jobs in code and where its round-robin over keys resumes. */
export interface ClaimFlow {
  /** `flow_admit`'s `p_limits` (see flow/spec.ts); `{}` when no job has a limit. */
  readonly limitsJson: string;
  /** Share the slots evenly between unkeyed and keyed jobs (some job has a limit). */
  readonly split: boolean;
  /**
   * With `split`, the slots unkeyed jobs take first (the keyed ones take what they leave, then unkeyed
   * jobs fill the rest); absent: half, rounded up. An odd claim's extra slot must alternate between
   * the two, or a claim of one slot would never go to a keyed job while unkeyed ones are due.
   */
  readonly unkeyedFirst?: number;
  /** The key after which this claim starts its round-robin; absent: where the last tick's ended (stored). */
  readonly cursor?: string;
  /** Most keys one claim looks at. */
  readonly maxKeys: number;
  /**
   * Whether keyed jobs may be queued (absent: they may). When false (no job has limits and an
   * earlier claim of the tick found none), the claim leaves the admission out of its statement:
   * about a tenth of a no-op step's server time.
   */
  readonly keyed?: boolean;
}

/**
 * Due jobs, skipping rows another tick holds, marked running under a fresh lease;
 * `gate` (the tick holds a slot) must hold for anything to be claimed. Unkeyed jobs
 * come in dispatch order along their own index; keyed ones (flow control) through
 * `flow_admit`, which admits them round-robin across keys within their limits and
 * names the concurrency bucket each run counts in. With `split`, half the slots go
 * to unkeyed jobs first, the keyed ones take what they leave, and unkeyed jobs fill
 * what is still free; otherwise unkeyed jobs come first (keyed rows are then only
 * those of limits since removed, which the admission lets through).
 */
const NO_FLOW_CLAIM: ClaimFlow = { limitsJson: "{}", split: false, cursor: "", maxKeys: 8 };

export const claimFragment = (t: Tables, p: Params, input: ClaimInput, gate?: string): Fragment & { keyed: boolean } => {
  const flow = input.flow ?? NO_FLOW_CLAIM;
  const when = gate ? ` AND ${gate}` : "";
  const limit = p.add(input.limit);
  const first = !flow.split ? `${limit}::int` : flow.unkeyedFirst === undefined ? `ceil(${limit}::int / 2.0)::int` : `${p.add(flow.unkeyedFirst)}::int`;
  // Dispatch order is queue_dispatch_idx's key: the priority negated, so that one row comparison
  // says "after this job".
  // The limit as a subquery: a custom plan then estimates the rows it takes as a generic plan does, so the
  // server keeps the step's generic plan instead of planning every statement anew. 0 when nothing unkeyed
  // is due: the dispatch index is then not read at all. The planner takes such a limit for a tenth of the
  // due rows; the constant one outside it (never reached: the claim's limit, rounded up to a power of two so
  // that a tick's statements have few texts) keeps the estimate, and so the statement's cost, from growing
  // with the queue (at 2M due jobs it passed the cost at which a server with JIT compiles every statement:
  // 60-90 ms each, and the drain 9x slower).
  const plain = (name: string, take: string, extra = "") => `${name} AS (
      SELECT * FROM (SELECT id, NULL::text AS bucket, priority, run_at FROM ${t.queue}
        WHERE status = 'queued' AND flow_key IS NULL AND run_at <= now()${when}${extra}
        ORDER BY -priority, run_at, id
        LIMIT (SELECT CASE WHEN (SELECT waiting FROM plain_waiting) THEN ${take} ELSE 0 END) FOR UPDATE SKIP LOCKED) c
      LIMIT ${2 ** Math.ceil(Math.log2(Math.min(Math.max(1, input.limit), MAX_CONCURRENCY)))})`;
  const keyed = flow.split || flow.keyed !== false;
  const ctes = [
    // Whether an unkeyed job is due, from the head of queue_plain_due_idx (migration 019). The dispatch index
    // leads with the priority: with none due it would be read whole (the planner, on statistics from when rows
    // were due, may well walk it).
    `plain_waiting AS (
      SELECT ${dueHead(t, "unkeyed")} IS NOT NULL AS waiting)`,
    ...(input.after ? resumed(p, plain, first, input.after) : [plain("plain1", first)]),
  ];
  if (keyed) ctes.push(
    // Whether a keyed job is due, from the head of queue_keyed_due_idx: keys holding only delayed or
    // debounced jobs then cost an idle tick nothing.
    `keyed_waiting AS (SELECT ${dueHead(t, "keyed")} IS NOT NULL AS waiting)`,
    // The limits go as text, parsed only when the admission runs (a subquery: a custom plan would fold the cast
    // of a constant): as a jsonb parameter they were parsed at every bind, 5 ms of an idle tick's statement at
    // 1,000 limited jobs.
    `flowed AS (
      SELECT f.job_id AS id, f.bucket, f.next_cursor, f.held, f.retry_at
      FROM ${t.prefix}flow_admit((SELECT ${p.add(flow.limitsJson)}::text)::jsonb,
        CASE WHEN ${gate ?? "true"} THEN greatest(0, ${limit}::int - (SELECT count(*) FROM plain1)::int) ELSE 0 END,
        ${flow.cursor === undefined ? storedCursorSql(t) : `${p.add(flow.cursor)}::text`}, ${p.add(flow.maxKeys)}::int, NULL::jsonb) f
      WHERE (SELECT waiting FROM keyed_waiting))`,
  );
  if (flow.split) {
    ctes.push(plain("plain2", `greatest(0, ${limit}::int - (SELECT count(*) FROM plain1)::int - (SELECT count(id) FROM flowed)::int)`, ` AND ${notAmong("SELECT id FROM plain1")}`));
  }
  // The claim: once a job runs, the next enqueue with its debounce key starts a new job; updated_at is the
  // instant of the claim (the start a run shows and its rate windows count). The id list is also an index
  // condition: however many rows the planner expects the admission to return, the queue is read by its
  // primary key, never scanned to hash-join them.
  ctes.push(
    `picked AS (
      SELECT id, bucket FROM plain1${keyed ? " UNION ALL SELECT id, bucket FROM flowed WHERE id IS NOT NULL" : ""}${flow.split ? " UNION ALL SELECT id, bucket FROM plain2" : ""})`,
    `claimed AS (
      UPDATE ${t.queue} q
      SET status = 'running', attempt = q.attempt + 1, lease_owner = ${p.add(input.owner)}::uuid,
          lease_expires_at = now() + ${p.add(input.leaseMs)} * interval '1 millisecond', flow_bucket = picked.bucket,
          debounce_key = NULL, updated_at = ${keyed ? ADMITTED_AT : "clock_timestamp()"}
      FROM picked WHERE q.id = picked.id AND q.id = ANY (ARRAY(SELECT id FROM picked))
      RETURNING q.id, q.job_name, q.payload, q.attempt, q.max_attempts, q.priority,
                q.correlation_id, q.idempotency_key, q.run_at,
                (extract(epoch FROM clock_timestamp() - q.created_at) * 1000)::float8 AS age_ms,
                coalesce(q.last_error LIKE '%${PLATFORM_REFUSAL}%', false) AS refused_before, q.traceparent)`,
  );
  return { ctes, keyed };
};

/**
 * The instant the admission wrote its starts at (after all of its locks; see migration 013), read
 * once the admission has run (the subquery reads its result), or the clock when it added none or
 * its database predates it.
 */
const ADMITTED_AT = `coalesce((SELECT nullif(current_setting('pgtick.claimed_at', true), '')::timestamptz
            FROM flowed WHERE id IS NULL LIMIT 1), clock_timestamp())`;

type Plain = (name: string, take: string, extra?: string) => string;

/**
 * Not one of the ids another part of the claim took: an array, computed once. `NOT IN (subquery)`, with the
 * part's size estimated from a limit the planner cannot see (a tenth of the queue), was costed past a work_mem
 * hash: at 2M due jobs, a plan so dear that a server with JIT compiled every claim anew (1 s each, 100x slower).
 */
const notAmong = (ids: string) => `id <> ALL (ARRAY(${ids}))`;

/**
 * `plain1` resuming after `after`: higher priorities first (their dead entries are only those of
 * jobs of a higher priority claimed since the last vacuum), then the range after the position,
 * then, for what those leave, the head of the index (a limit of 0 reads nothing).
 */
const resumed = (p: Params, plain: Plain, first: string, after: DispatchPosition): string[] => {
  // Subqueries, as the limit above: a custom plan sees them as a generic one does.
  const neg = `(SELECT -${p.add(after.priority)}::int)`;
  const position = `(${neg}, (SELECT ${p.add(after.runAt)}::timestamptz), (SELECT ${p.add(after.id)}::uuid))`;
  const count = (names: string[]) => names.map((n) => ` - (SELECT count(*) FROM ${n})::int`).join("");
  const others = (names: string[]) => ` AND ${notAmong(names.map((n) => `SELECT id FROM ${n}`).join(" UNION ALL "))}`;
  return [
    plain("plain1_up", first, ` AND -priority < ${neg}`),
    plain("plain1_on", `${first}${count(["plain1_up"])}`, ` AND (-priority, run_at, id) > ${position}`),
    plain("plain1_head", `${first}${count(["plain1_up", "plain1_on"])}`, others(["plain1_up", "plain1_on"])),
    `plain1 AS (SELECT * FROM plain1_up UNION ALL SELECT * FROM plain1_on UNION ALL SELECT * FROM plain1_head)`,
  ];
};

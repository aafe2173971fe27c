import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import type { FlowKeys } from "../../flow/keys.js";
import { QUEUE_RECORD, queueInsert, selectColumns } from "../shared/queue-insert.js";
import { Params, type Tables } from "../shared/tables.js";

export interface NewJobRow extends FlowKeys {
  readonly id: string;
  readonly job_name: string;
  readonly payload: unknown;
  /** ISO time; when absent the job is due `delay_ms` after this statement's start (not its transaction's: an enqueue in an app's transaction counts from the enqueue). */
  readonly run_at: string | null;
  readonly delay_ms: number | null;
  readonly priority: number;
  readonly max_attempts: number;
  readonly idempotency_key: string | null;
  readonly correlation_id: string | null;
  readonly debounce_key: string | null;
  /** With a debounce key: the job is due at the latest this long after this enqueue (see `debounce_until`). */
  readonly max_wait_ms?: number;
  /** The W3C trace context of the request that enqueued it, so its runs link back. */
  readonly traceparent?: string | null;
}

export interface EnqueuedRow {
  readonly id: string;
  readonly job_name: string;
  readonly idempotency_key: string | null;
  readonly debounce_key?: string | null;
  /** A debounced enqueue that replaced a queued job's payload and due time. */
  readonly debounced?: boolean;
}

/**
 * The most one enqueue sends, its jobs together (each payload is within its own limit): 100 jobs of
 * 1 MB took 12 s to store; 300 passed the statement's bound, and 600 the longest string V8 makes.
 */
const MAX_BATCH_BYTES = 64 * 1024 * 1024;

/** A text's UTF-8 bytes when they are more than `max` (counted until past it), else undefined. */
const bytesOver = (text: string, max: number): number | undefined => {
  // A UTF-16 unit is one to three bytes (a surrogate pair, two units, is four).
  if (text.length > max) return text.length;
  if (text.length * 3 <= max) return undefined;
  let n = 0;
  for (let i = 0; i < text.length && n <= max; i++) {
    const c = text.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
  }
  return n > max ? n : undefined;
};

const batchText = (rows: readonly NewJobRow[]): string => {
  let text: string | undefined;
  try {
    text = JSON.stringify(rows);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  const over = text === undefined ? Infinity : bytesOver(text, MAX_BATCH_BYTES);
  if (text === undefined || over !== undefined) {
    const size = text === undefined ? "more than V8's longest string" : `more than ${over} bytes`;
    throw new JobsError("payload_too_large", `enqueueMany's ${rows.length} jobs are ${size} together; one call sends at most ${MAX_BATCH_BYTES}: split the batch`, {
      count: rows.length, limit: MAX_BATCH_BYTES,
    });
  }
  return text;
};

/**
 * Inserts many jobs in one statement. Jobs without a key take a plain insert.
 * Keyed jobs take ON CONFLICT DO NOTHING, so a key that matches a queued or
 * running job of the same name inserts nothing and never locks that job's row
 * (an enqueue inside a long caller transaction must not stall a tick's settle).
 * Debounced jobs replace the payload and due time of a queued job of the same
 * name and debounce key (a running one no longer counts: a new job is queued),
 * the due time never past the earliest cap an enqueue of the series set
 * (`debounce_until`; LEAST passes over NULLs).
 * Returned: for each keyed or debounced input, the id now holding its key. A key
 * missing from the result matched a row committed after this statement's
 * snapshot; `findKeyed` looks again.
 */
export const insertJobs = async (db: Db, t: Tables, rows: readonly NewJobRow[]): Promise<EnqueuedRow[]> => {
  if (rows.length === 0) return [];
  const p = new Params();
  const input = batchText(rows);
  const kind = (r: NewJobRow) => (r.debounce_key !== null ? "debounced" : r.idempotency_key !== null ? "keyed" : "plain");
  const has = (k: string) => rows.some((r) => kind(r) === k);
  const due = "coalesce(x.run_at, statement_timestamp() + coalesce(x.delay_ms, 0) * interval '1 millisecond')";
  const from = (where: string, runAt = due, extra = {}) => `${selectColumns("x", { run_at: runAt, traceparent: "x.traceparent" }, extra)}
    FROM input x WHERE ${where}`;
  // Only debounced jobs name the cap's column: plain and keyed enqueues still work on tables before migration 026.
  // A new debounced job is due no later than its cap either (a batch's earlier row of its key may have given a shorter one).
  const capAt = "statement_timestamp() + x.max_wait_ms * interval '1 millisecond'";
  const cap = { debounce_until: capAt };
  // json, not jsonb: the rows are read straight from the text, not built as one jsonb value first
  // (bulk enqueue 5-10% faster, bench/profile/enqueue-micro.ts).
  const ctes = [`input AS MATERIALIZED (SELECT * FROM json_to_recordset(${p.add(input)}::json) AS x(${QUEUE_RECORD}, delay_ms bigint, max_wait_ms bigint))`];
  if (has("plain")) ctes.push(`plain AS (${queueInsert(t, from("x.idempotency_key IS NULL AND x.debounce_key IS NULL"))})`);
  if (has("keyed")) {
    ctes.push(`keyed AS (${queueInsert(t, from("x.idempotency_key IS NOT NULL AND x.debounce_key IS NULL"),
      `ON CONFLICT (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING q.id, q.job_name, q.idempotency_key`)})`);
  }
  if (has("debounced")) {
    ctes.push(`debounced AS (${queueInsert(t, from("x.debounce_key IS NOT NULL", `least(${due}, ${capAt})`, cap),
      `ON CONFLICT (job_name, debounce_key) WHERE status = 'queued' AND debounce_key IS NOT NULL DO UPDATE SET
         payload = excluded.payload, run_at = least(excluded.run_at, q.debounce_until, excluded.debounce_until),
         debounce_until = least(q.debounce_until, excluded.debounce_until), priority = excluded.priority, max_attempts = excluded.max_attempts,
         correlation_id = excluded.correlation_id, flow_key = excluded.flow_key, concurrency_key = excluded.concurrency_key,
         rate_keys = excluded.rate_keys, traceparent = excluded.traceparent, updated_at = now()
       RETURNING q.id, q.job_name, q.debounce_key, (q.xmax::text <> '0') AS debounced`, cap)})`);
  }
  const selects: string[] = [];
  if (has("keyed")) {
    selects.push(`SELECT id, job_name, idempotency_key, NULL::text AS debounce_key, false AS debounced FROM keyed
       UNION ALL
       SELECT q.id, q.job_name, q.idempotency_key, NULL::text, false
       FROM ${t.queue} q JOIN input x ON q.job_name = x.job_name AND q.idempotency_key = x.idempotency_key
       WHERE x.debounce_key IS NULL AND NOT EXISTS (SELECT 1 FROM keyed k WHERE k.id = x.id)`);
  }
  if (has("debounced")) selects.push(`SELECT id, job_name, NULL::text, debounce_key, debounced FROM debounced`);
  const select = selects.length > 0 ? selects.join("\nUNION ALL\n") : "SELECT NULL::uuid AS id, NULL AS job_name, NULL AS idempotency_key WHERE false";
  const result = await db.query<EnqueuedRow>(`WITH ${ctes.join(",\n")}\n${select}`, p.values);
  return result.rows;
};

/** The live jobs holding these (name, key) pairs, read in a fresh snapshot. */
export const findKeyed = async (db: Db, t: Tables, keys: ReadonlyArray<{ job_name: string; idempotency_key: string }>): Promise<EnqueuedRow[]> => {
  if (keys.length === 0) return [];
  const p = new Params();
  const { rows } = await db.query<EnqueuedRow>(
    `SELECT q.id, q.job_name, q.idempotency_key
     FROM ${t.queue} q JOIN jsonb_to_recordset(${p.json(keys)}) AS x(job_name text, idempotency_key text)
       ON q.job_name = x.job_name AND q.idempotency_key = x.idempotency_key`,
    p.values,
  );
  return rows;
};

import type { Tables } from "./tables.js";

/**
 * The one shape of a new queue row, for every way a job enters the queue: an
 * enqueue, a replayed dead letter, a schedule's occurrence or run. A caller
 * selects these columns in this order from its own source.
 */
const QUEUE_COLUMNS = [
  "id", "job_name", "payload", "run_at", "priority", "max_attempts", "idempotency_key", "correlation_id",
  "flow_key", "concurrency_key", "rate_keys", "debounce_key", "created_at", "replays", "traceparent",
] as const;

type Column = (typeof QUEUE_COLUMNS)[number];

/** What a new job has unless its source says otherwise: a replay keeps its first created time and counts itself. */
const DEFAULTS: Partial<Record<Column, string>> = { created_at: "now()", replays: "0", traceparent: "NULL::text" };

/**
 * Columns only some inserts name, after the others: a debounced enqueue's cap (migration 026). Left out
 * of the rest, so that a plain enqueue still works on tables a migration behind (a deploy that starts
 * before its migration has run), as it did before the cap.
 */
type Extra = Partial<Record<"debounce_until", string>>;

/** A record type for input rows carrying the columns (`jsonb_to_recordset(...) AS x(${QUEUE_RECORD})`). */
export const QUEUE_RECORD = `id uuid, job_name text, payload jsonb, run_at timestamptz, priority integer, max_attempts integer,
  idempotency_key text, correlation_id text, flow_key text, concurrency_key text, rate_keys jsonb, debounce_key text, traceparent text`;

/** `INSERT INTO queue (the columns) <select> <rest>`: the select lists values in QUEUE_COLUMNS' order. */
export const queueInsert = (t: Tables, select: string, rest = "", extra: Extra = {}): string =>
  `INSERT INTO ${t.queue} AS q (${[...QUEUE_COLUMNS, ...Object.keys(extra)].join(", ")})\n${select}\n${rest}`;

/** The columns of `alias`, with some replaced by expressions (a replay's edited payload, an occurrence's due time). */
export const selectColumns = (alias: string, replace: Partial<Record<Column, string>> = {}, extra: Extra = {}): string =>
  `SELECT ${[...QUEUE_COLUMNS.map((c) => replace[c] ?? DEFAULTS[c] ?? `${alias}.${c}`), ...Object.values(extra)].join(", ")}`;

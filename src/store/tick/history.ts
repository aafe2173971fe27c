import type { LogLevel } from "../../log.js";
import { runInsert } from "../shared/run-insert.js";
import { type Fragment, runsOf } from "./fragments.js";

/** One `ctx.log` line as the history keeps it. */
export interface LogLine {
  readonly at: string;
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields?: Record<string, unknown>;
}

/** What a run's history row carries beyond what the queue row knows (absent when history is off). */
export interface RunHistory {
  readonly stack?: string | null;
  /** The handler's return value made storable (JSON values only), or absent. */
  readonly output?: unknown;
  /** The return value was too large for `maxOutputBytes`, or could not be made JSON: left out. */
  readonly outputTruncated?: boolean;
  readonly logs?: readonly LogLine[];
  /** How long before the statement the run started, when that is not its duration (settled after it ended). */
  readonly startedAgoMs?: number;
  /** At most how many bytes the output and logs add to a statement (not stored): large batches are cut by it. */
  readonly bytes?: number;
}

/** The fields a settlement's input row carries for its history (see `HISTORY_RECORD`). */
export const historyFields = (h: RunHistory | undefined) =>
  h
    ? {
        stack: h.stack ?? null, output: h.output ?? null, output_truncated: h.outputTruncated ?? false, logs: h.logs && h.logs.length > 0 ? h.logs : null,
        started_ago_ms: h.startedAgoMs === undefined ? null : Math.round(h.startedAgoMs),
      }
    : {};

/** The record columns of `historyFields` in a `jsonb_to_recordset(...) AS s(...)` list. */
export const HISTORY_RECORD = "stack text, output jsonb, output_truncated boolean, logs jsonb, started_ago_ms integer";

interface HistorySource {
  /** The run's error, as SQL. */
  readonly error: string;
  /** The settlement's recordset alias, when the run was settled by its tick. */
  readonly s?: string;
  /** When the run started, as SQL (default: its duration before the statement). */
  readonly started?: string;
  /** The run ended the job: keep its payload, so it can be run again. */
  readonly final?: boolean;
  /** The run's attempt, as SQL, where the statement changed the row's (default: the row's). */
  readonly attempt?: string;
}

/**
 * The columns every outcome CTE returns for the history row, from the queue row `q`:
 * named `h_*` so they never clash with the dead-letter columns beside them.
 */
export const historyColumns = (q: string, h: HistorySource): string => {
  const from = (col: string, type: string) => (h.s ? `${h.s}.${col}` : `NULL::${type}`);
  return `${h.attempt ?? `${q}.attempt`} AS h_attempt, ${q}.max_attempts AS h_max_attempts, ${q}.priority AS h_priority, ${q}.correlation_id AS h_correlation, ${q}.idempotency_key AS h_idempotency,
     ${q}.created_at AS h_created, ${h.final ? `${q}.payload` : "NULL::jsonb"} AS h_payload, ${h.error} AS h_error,
     ${from("stack", "text")} AS h_stack, ${from("output", "jsonb")} AS h_output,
     coalesce(${from("output_truncated", "boolean")}, false) AS h_truncated, ${from("logs", "jsonb")} AS h_logs,
     ${h.started ?? (h.s ? `now() - coalesce(${h.s}.started_ago_ms, ${h.s}.duration_ms) * interval '1 millisecond'` : "NULL::timestamptz")} AS h_started`;
};

/** One insert into the history for every run the statement's outcome CTEs ended. */
export const historySink = (table: string, outcomes: NonNullable<Fragment["outcomes"]>): string =>
  `history AS (
    ${runInsert(table, {
      job_id: "id", job_name: "job_name", attempt: "h_attempt", max_attempts: "h_max_attempts", priority: "h_priority", outcome: "outcome",
      started_at: "h_started", duration_ms: "duration_ms", error: "h_error", stack: "h_stack", output: "h_output", output_truncated: "h_truncated",
      correlation_id: "h_correlation", idempotency_key: "h_idempotency", created_at: "h_created", logs: "h_logs", payload: "h_payload",
    }, `(${outcomes
      .map((o) => `SELECT id, job_name, duration_ms, h_attempt, h_max_attempts, h_priority, h_started, h_error, h_stack, h_output, h_truncated,
              h_correlation, h_idempotency, h_created, h_logs, h_payload, '${o.outcome}'::text AS outcome FROM ${runsOf(o)}`)
      .join(" UNION ALL ")}) o`)}
    RETURNING 1)`;

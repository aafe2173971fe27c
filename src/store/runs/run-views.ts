import type { LogLine } from "../tick/history.js";
import { isoSql } from "../shared/sql.js";

/** How a run ended; `cancelled` is a queued job's cancel, recorded so that reading the job says so (no attempt ran). */
export type RunOutcome = "succeeded" | "retried" | "dead_lettered" | "requeued" | "reclaimed" | "cancelled";
export const RUN_OUTCOMES: readonly RunOutcome[] = ["succeeded", "retried", "dead_lettered", "requeued", "reclaimed", "cancelled"];

/** One ended attempt as lists show it. */
export interface RunSummary {
  /** The run's own id (a number, as text): newest runs have the highest. */
  readonly id: string;
  readonly jobId: string;
  readonly job: string;
  readonly attempt: number;
  readonly outcome: RunOutcome;
  readonly startedAt: string | null;
  readonly finishedAt: string;
  /** Null for a run reclaimed after its tick was killed (nobody saw it end). */
  readonly durationMs: number | null;
  readonly error: string | null;
  readonly correlationId: string | null;
  readonly idempotencyKey: string | null;
  /** When the job was first enqueued. */
  readonly createdAt: string | null;
  readonly outputTruncated: boolean;
}

/** One run with everything the history keeps of it. */
export interface RunView extends RunSummary {
  readonly maxAttempts: number | null;
  readonly priority: number | null;
  readonly stack: string | null;
  /** What the handler returned (succeeded runs), as JSON; null when nothing, or too much (`outputTruncated`). */
  readonly output: unknown;
  /** Its last `ctx.log` lines, oldest first. */
  readonly logs: readonly LogLine[];
  /** The payload, on the run that ended the job (so it can be run again); null on the others. */
  readonly payload: unknown;
}

const summaryFields = (r: string) => `
  'id', ${r}.id::text, 'jobId', ${r}.job_id, 'job', ${r}.job_name, 'attempt', ${r}.attempt, 'outcome', ${r}.outcome,
  'startedAt', ${isoSql(`${r}.started_at`)}, 'finishedAt', ${isoSql(`${r}.finished_at`)}, 'durationMs', ${r}.duration_ms,
  'error', ${r}.error, 'correlationId', ${r}.correlation_id, 'idempotencyKey', ${r}.idempotency_key,
  'createdAt', ${isoSql(`${r}.created_at`)}, 'outputTruncated', ${r}.output_truncated`;

/** A runs row `r` as a list row: no stack, output, logs or payload, so a page stays small. */
export const runSummaryJson = (r: string) => `jsonb_build_object(${summaryFields(r)})`;

/** A runs row `r` whole. */
export const runJson = (r: string) =>
  `jsonb_build_object(${summaryFields(r)}, 'maxAttempts', ${r}.max_attempts, 'priority', ${r}.priority, 'stack', ${r}.stack,
     'output', ${r}.output, 'logs', coalesce(${r}.logs, '[]'::jsonb), 'payload', ${r}.payload)`;

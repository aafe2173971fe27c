import { isoSql } from "./paging.js";

/** A job as the API and the dashboard show it. */
export interface JobView {
  readonly id: string;
  readonly job: string;
  readonly payload: unknown;
  /** `dead` only from `getJob`: the job is now a dead letter (see `reason`, `deadAt`). */
  readonly status: "queued" | "running" | "dead";
  readonly runAt: string;
  readonly priority: number;
  /** Attempts started so far. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly lastError: string | null;
  readonly idempotencyKey: string | null;
  readonly correlationId: string | null;
  readonly leaseExpiresAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly reason: string | null;
  readonly deadAt: string | null;
}

/** A queue row `q` as one jsonb value (drivers differ on timestamps and bigints; jsonb reads the same everywhere). */
export const jobJson = (q: string) => `jsonb_build_object(
  'id', ${q}.id, 'job', ${q}.job_name, 'payload', ${q}.payload, 'status', ${q}.status,
  'runAt', ${isoSql(`${q}.run_at`)}, 'priority', ${q}.priority, 'attempt', ${q}.attempt,
  'maxAttempts', ${q}.max_attempts, 'lastError', ${q}.last_error, 'idempotencyKey', ${q}.idempotency_key,
  'correlationId', ${q}.correlation_id, 'leaseExpiresAt', ${isoSql(`${q}.lease_expires_at`)},
  'createdAt', ${isoSql(`${q}.created_at`)}, 'updatedAt', ${isoSql(`${q}.updated_at`)},
  'reason', NULL, 'deadAt', NULL)`;

/** A dead letter as the API and the dashboard show it. */
export interface DeadLetterView {
  readonly id: string;
  readonly job: string;
  readonly payload: unknown;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly reason: string;
  readonly lastError: string | null;
  readonly idempotencyKey: string | null;
  readonly correlationId: string | null;
  readonly createdAt: string;
  readonly deadAt: string;
}

export const deadLetterJson = (d: string) => `jsonb_build_object(
  'id', ${d}.id, 'job', ${d}.job_name, 'payload', ${d}.payload, 'attempts', ${d}.attempts,
  'maxAttempts', ${d}.max_attempts, 'priority', ${d}.priority, 'reason', ${d}.reason,
  'lastError', ${d}.last_error, 'idempotencyKey', ${d}.idempotency_key, 'correlationId', ${d}.correlation_id,
  'createdAt', ${isoSql(`${d}.created_at`)}, 'deadAt', ${isoSql(`${d}.dead_at`)})`;

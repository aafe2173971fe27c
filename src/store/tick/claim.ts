import type { Fragment } from "./fragments.js";
import type { Params, Tables } from "../shared/tables.js";

export interface ClaimInput {
  readonly limit: number;
  /** The token this claim mints; every later write to these rows is fenced on it. */
  readonly owner: string;
  readonly leaseMs: number;
}

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
  readonly created_at: string;
}

/**
 * Due jobs in dispatch order, skipping rows another tick holds, marked running
 * under a fresh lease. `gate` (the tick holds a slot) must hold for anything to be claimed.
 */
export const claimFragment = (t: Tables, p: Params, input: ClaimInput, gate?: string): Fragment => ({
  ctes: [
    `picked AS (
      SELECT id FROM ${t.queue}
      WHERE status = 'queued' AND run_at <= now()${gate ? ` AND ${gate}` : ""}
      ORDER BY priority DESC, run_at, id
      LIMIT ${p.add(input.limit)} FOR UPDATE SKIP LOCKED)`,
    `claimed AS (
      UPDATE ${t.queue} q
      SET status = 'running', attempt = q.attempt + 1, lease_owner = ${p.add(input.owner)}::uuid,
          lease_expires_at = now() + ${p.add(input.leaseMs)} * interval '1 millisecond', updated_at = now()
      FROM picked WHERE q.id = picked.id
      RETURNING q.id, q.job_name, q.payload, q.attempt, q.max_attempts, q.priority,
                q.correlation_id, q.idempotency_key, q.run_at, q.created_at)`,
  ],
});

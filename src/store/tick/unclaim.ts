import type { Params, Tables } from "../shared/tables.js";

/** What statements whose answers were lost may have taken, given back (see `unclaimCtes`). */
export interface Unclaim {
  /** The lease tokens of claims whose answers were lost; `counted`: their statement wrote its counts to the tick's slot row. */
  readonly claims: ReadonlyArray<{ readonly owner: string; readonly counted: boolean }>;
  /** Slot tokens: the tick's own (a take whose answer was lost) and those of fan-out reservations it never learned of. */
  readonly slots: readonly string[];
  /** The slot the tick knows it holds (under its own token): it stays the tick's. */
  readonly keepSlot?: number;
}

/**
 * A claim whose answer was lost may have committed: its jobs are running under a token no run holds,
 * and would wait for their lease to expire, then be reclaimed with the attempt spent (at their last
 * attempt, dead letters that never ran). They go back to the queue as they were, the attempt returned
 * and the place in dispatch order kept: nothing ran. Found by token among the running jobs (a rare
 * path: no index leads with the token; what it reads is bounded by the jobs running, not the queue).
 * Slots taken or reserved under tokens the tick never learned of are freed the same way. Both return
 * the tokens they found: one not found yet may belong to a statement the server has not finished.
 * A claim takes queued jobs, so no job is written twice in the statement, and the slot the tick holds is
 * kept out; a lost slot whose lease has expired may also be picked by a take or a fan-out in the same
 * statement: PostgreSQL applies one of the two updates, and either leaves the slot usable.
 */
export const unclaimCtes = (t: Tables, p: Params, u: Unclaim): string[] => [
  `unclaimed AS (UPDATE ${t.queue} q SET status = 'queued', attempt = q.attempt - 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    FROM jsonb_to_recordset(${p.json(u.claims)}) AS l(owner uuid, counted boolean)
    WHERE q.status = 'running' AND q.lease_owner = l.owner RETURNING q.id, l.owner, l.counted)`,
  `slot_unclaimed AS (UPDATE ${t.ticks} t SET owner = NULL, reserved = false, expires_at = NULL, finished_at = now()
    FROM jsonb_array_elements_text(${p.json(u.slots)}) AS l(token)
    WHERE t.owner = l.token::uuid AND t.slot IS DISTINCT FROM ${p.add(u.keepSlot ?? null)}::int RETURNING l.token)`,
];

/** The result column: the tokens whose jobs or slots were found and given back. */
export const UNCLAIMED_TOKENS = `(SELECT coalesce(json_agg(DISTINCT x.token), '[]'::json)
  FROM (SELECT owner::text AS token FROM unclaimed UNION ALL SELECT token FROM slot_unclaimed) x) AS "unclaimedTokens"`;

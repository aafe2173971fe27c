import type { Params, Tables } from "../shared/tables.js";

/** What statements whose answers were lost may have taken, given back (see `unclaimCtes`). */
export interface Unclaim {
  /** The lease tokens of claims whose answers were lost. */
  readonly owners: readonly string[];
  /** The tick's own token, when a statement that would take its slot lost its answer and the tick holds none it knows of. */
  readonly slotOwner?: string;
  /** The slot the tick knows it holds (under the same token): it stays the tick's. */
  readonly keepSlot?: number;
}

/**
 * A claim whose answer was lost may have committed: its jobs are running under a token no run holds,
 * and would wait for their lease to expire, then be reclaimed with the attempt spent (at their last
 * attempt, dead letters that never ran). They go back to the queue as they were, the attempt returned
 * and the place in dispatch order kept: nothing ran. Found by token among the running jobs (a rare
 * path: no index leads with the token; what it reads is bounded by the jobs running, not the queue).
 * A slot taken under the tick's token that the tick never learned of is freed the same way. Every row
 * these update is one no other part of the statement writes: a take picks a free slot, and the slot
 * the tick holds is kept out.
 */
export const unclaimCtes = (t: Tables, p: Params, u: Unclaim): string[] => [
  `unclaimed AS (UPDATE ${t.queue} q SET status = 'queued', attempt = q.attempt - 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    WHERE q.status = 'running' AND q.lease_owner IN (SELECT o::uuid FROM jsonb_array_elements_text(${p.json(u.owners)}) o) RETURNING q.id)`,
  `slot_unclaimed AS (UPDATE ${t.ticks} t SET owner = NULL, reserved = false, expires_at = NULL, finished_at = now()
    WHERE t.owner = ${p.add(u.slotOwner ?? null)}::uuid AND NOT t.reserved AND t.slot IS DISTINCT FROM ${p.add(u.keepSlot ?? null)}::int)`,
];

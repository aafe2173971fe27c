import { deadColumns, FENCE, type FragmentBuilder } from "./fragments.js";
import { HISTORY_RECORD, historyColumns, historyFields, type RunHistory } from "./history.js";

export interface Requeue {
  readonly id: string;
  readonly owner: string;
  readonly durationMs: number;
  readonly history?: RunHistory;
  /** Claimed but never started (the claim came back after the tick's deadline): it goes back without using an attempt. */
  readonly unstarted?: boolean;
}

/** Why a tick cut its runs short: its deadline, its caller stopping it (a shutdown), or a fault in the tick itself. */
export type CutShort = "deadline" | "stopped" | "failed";

export const CUT_SHORT: Record<CutShort, string> = {
  deadline: "the tick's deadline came before the run finished",
  stopped: "the tick was stopped (a shutdown) before the run finished",
  failed: "the tick ended early, on a fault of its own, before the run finished",
};

/** The requeue's texts for runs cut short for `why` (the dead letter's reason stays `deadline`). */
export const requeueErrors = (why: CutShort) => ({ error: `${CUT_SHORT[why]}; requeued`, dead: `${CUT_SHORT[why]}, at its last attempt` });

/**
 * At a tick's deadline: every run still going goes back to the queue, claimable
 * at once. The cut-short run counts as an attempt, so a job that never fits in a
 * budget ends as a dead letter (reason `deadline`) after its max attempts
 * instead of looping forever. A claim that came back too late to start goes back
 * with its attempt returned: nothing ran. So does a run its tick's caller stopped
 * (a Ctrl-C, a shutdown): that is no fault of the job's, and at its last attempt it
 * became a dead letter (platforms never stop a tick so; their limits are deadlines).
 */
export const requeueFragment: FragmentBuilder<{ readonly items: readonly Requeue[]; readonly why?: CutShort }> = (t, p, { items, why = "deadline" }) => {
  const input = p.json(items.map((i) => ({ id: i.id, owner: i.owner, duration_ms: i.durationMs, unstarted: i.unstarted === true, ...historyFields(i.history) })));
  const record = `id uuid, owner uuid, duration_ms integer, unstarted boolean, ${HISTORY_RECORD}`;
  const texts = requeueErrors(why);
  const error = p.add(texts.error);
  const dead = p.add(texts.dead);
  const returned = why === "stopped" ? "true" : "s.unstarted";
  return {
    ctes: [
      `requeued AS (
        UPDATE ${t.queue} q
        SET status = 'queued', run_at = now(), lease_owner = NULL, lease_expires_at = NULL,
            attempt = q.attempt - CASE WHEN ${returned} THEN 1 ELSE 0 END,
            last_error = CASE WHEN s.unstarted THEN q.last_error ELSE ${error}::text END, updated_at = now(), debounce_key = NULL
        FROM jsonb_to_recordset(${input}) AS s(${record})
        WHERE ${FENCE("q", "s", input)} AND (q.attempt < q.max_attempts OR ${returned})
        RETURNING q.id, q.job_name, s.duration_ms, q.flow_bucket, s.unstarted,
          ${historyColumns("q", { error: `${error}::text`, s: "s", attempt: why === "stopped" ? "q.attempt + 1" : undefined })})`,
      `requeue_exhausted AS (
        DELETE FROM ${t.queue} q
        USING jsonb_to_recordset(${input}) AS s(${record})
        WHERE ${FENCE("q", "s", input)} AND q.attempt >= q.max_attempts AND NOT ${returned}
        RETURNING ${deadColumns("q", `${dead}::text`, "'deadline'::text", "s.duration_ms")}, ${historyColumns("q", { error: `${dead}::text`, s: "s", final: true })})`,
    ],
    deadSources: ["requeue_exhausted"],
    outcomes: [
      // A claim returned unstarted was no run: no history row, no requeue in the metrics.
      { cte: "requeued", outcome: "requeued", ran: "NOT unstarted" },
      { cte: "requeue_exhausted", outcome: "dead_lettered" },
    ],
  };
};

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

export const DEADLINE_ERROR = "the tick's deadline came before the run finished; requeued";
/** The same cut at the job's last attempt: it became a dead letter (reason `deadline`), not requeued. */
export const DEADLINE_DEAD_ERROR = "the tick's deadline came before the run finished, at its last attempt";

/**
 * At a tick's deadline: every run still going goes back to the queue, claimable
 * at once. The cut-short run counts as an attempt, so a job that never fits in a
 * budget ends as a dead letter (reason `deadline`) after its max attempts
 * instead of looping forever. A claim that came back too late to start goes back
 * with its attempt returned: nothing ran.
 */
export const requeueFragment: FragmentBuilder<readonly Requeue[]> = (t, p, items) => {
  const input = p.json(items.map((i) => ({ id: i.id, owner: i.owner, duration_ms: i.durationMs, unstarted: i.unstarted === true, ...historyFields(i.history) })));
  const record = `id uuid, owner uuid, duration_ms integer, unstarted boolean, ${HISTORY_RECORD}`;
  const error = p.add(DEADLINE_ERROR);
  const dead = p.add(DEADLINE_DEAD_ERROR);
  return {
    ctes: [
      `requeued AS (
        UPDATE ${t.queue} q
        SET status = 'queued', run_at = now(), lease_owner = NULL, lease_expires_at = NULL,
            attempt = q.attempt - CASE WHEN s.unstarted THEN 1 ELSE 0 END,
            last_error = CASE WHEN s.unstarted THEN q.last_error ELSE ${error}::text END, updated_at = now(), debounce_key = NULL
        FROM jsonb_to_recordset(${input}) AS s(${record})
        WHERE ${FENCE("q", "s", input)} AND (q.attempt < q.max_attempts OR s.unstarted)
        RETURNING q.id, q.job_name, s.duration_ms, q.flow_bucket, s.unstarted, ${historyColumns("q", { error: `${error}::text`, s: "s" })})`,
      `requeue_exhausted AS (
        DELETE FROM ${t.queue} q
        USING jsonb_to_recordset(${input}) AS s(${record})
        WHERE ${FENCE("q", "s", input)} AND q.attempt >= q.max_attempts AND NOT s.unstarted
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

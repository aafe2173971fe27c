import { FENCE, type FragmentBuilder } from "./fragments.js";
import { HISTORY_RECORD, historyColumns, historyFields, type RunHistory } from "./history.js";

export interface Completion {
  readonly id: string;
  readonly owner: string;
  readonly durationMs: number;
  readonly history?: RunHistory;
}

/** Success: the job leaves the queue. Fenced, so a run that lost its lease deletes nothing. */
export const completeFragment: FragmentBuilder<readonly Completion[]> = (t, p, items) => {
  const input = p.json(items.map((i) => ({ id: i.id, owner: i.owner, duration_ms: i.durationMs, ...historyFields(i.history) })));
  return {
    ctes: [
      `completed AS (
        DELETE FROM ${t.queue} q
        USING jsonb_to_recordset(${input}) AS s(id uuid, owner uuid, duration_ms integer, ${HISTORY_RECORD})
        WHERE ${FENCE("q", "s", input)}
        RETURNING q.id, q.job_name, s.duration_ms, q.flow_bucket, ${historyColumns("q", { error: "NULL::text", s: "s", final: true })})`,
    ],
    outcomes: [{ cte: "completed", outcome: "succeeded" }],
  };
};

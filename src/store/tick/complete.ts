import { FENCE, type FragmentBuilder } from "./fragments.js";

export interface Completion {
  readonly id: string;
  readonly owner: string;
  readonly durationMs: number;
}

/** Success: the job leaves the queue. Fenced, so a run that lost its lease deletes nothing. */
export const completeFragment: FragmentBuilder<readonly Completion[]> = (t, p, items) => ({
  ctes: [
    `completed AS (
      DELETE FROM ${t.queue} q
      USING jsonb_to_recordset(${p.json(items.map((i) => ({ id: i.id, owner: i.owner, duration_ms: i.durationMs })))})
        AS s(id uuid, owner uuid, duration_ms integer)
      WHERE ${FENCE("q", "s")}
      RETURNING q.id, q.job_name, s.duration_ms, q.flow_bucket)`,
  ],
  outcomes: [{ cte: "completed", outcome: "succeeded" }],
});

import { JobsError } from "../../errors.js";
import { requestKey } from "../idempotency.js";
import type { RunOutcome } from "../../store/runs/run-views.js";
import { type Handlers, jobsOf, notifyEnqueued } from "../api-context.js";
import { intParam, queryParams } from "../params.js";

/** The run history: lists and one run; `rerun` enqueues a new job with the run's payload. */
export const runHandlers: Handlers<"runs.list" | "runs.get" | "runs.rerun"> = {
  async "runs.list"(c) {
    const q = queryParams(c, "runs.list");
    const jobs = await jobsOf(c);
    return c.json(await jobs.runs.list({
      job: q.job, outcome: q.outcome as RunOutcome | undefined, jobId: q.jobId, correlationId: q.correlationId,
      idempotencyKey: q.idempotencyKey, since: q.since, until: q.until, limit: intParam(q.limit, "limit"), cursor: q.cursor,
    }));
  },
  async "runs.get"(c) {
    const id = c.req.param("id")!;
    const run = await (await jobsOf(c)).runs.get(id);
    if (!run) throw new JobsError("not_found", `no run ${id}: the history does not have it (older than its retention, or never existed)`, { id });
    return c.json(run);
  },
  async "runs.rerun"(c, config) {
    const idempotencyKey = await requestKey(c, config.maxBodyBytes);
    const done = await (await jobsOf(c)).runs.rerun(c.req.param("id")!, { idempotencyKey });
    if (!done.deduplicated) await notifyEnqueued(config, c, [done.id], true);
    return c.json(done, done.deduplicated ? 200 : 201);
  },
};

import { type Handlers, jobsOf, notifyEnqueued } from "../api-context.js";
import { requestKey } from "../idempotency.js";
import { intParam, queryParams } from "../params.js";

/** Schedules are defined in code; the API lists them and pauses, resumes or runs one (`not_found` for other names). */
export const scheduleHandlers: Handlers<"schedules.list" | "schedules.pause" | "schedules.resume" | "schedules.run"> = {
  async "schedules.list"(c) {
    const q = queryParams(c, "schedules.list");
    return c.json(await (await jobsOf(c)).schedules.list({ next: intParam(q.next, "next"), limit: intParam(q.limit, "limit"), cursor: q.cursor }));
  },
  async "schedules.pause"(c) {
    return c.json(await (await jobsOf(c)).schedules.pause(c.req.param("name")!));
  },
  async "schedules.resume"(c) {
    return c.json(await (await jobsOf(c)).schedules.resume(c.req.param("name")!));
  },
  async "schedules.run"(c, config) {
    const idempotencyKey = await requestKey(c, config.maxBodyBytes);
    const done = await (await jobsOf(c)).schedules.run(c.req.param("name")!, idempotencyKey === undefined ? {} : { idempotencyKey });
    if (!done.deduplicated) await notifyEnqueued(config, c, [done.id], true);
    return c.json(done, done.deduplicated ? 200 : 201);
  },
};

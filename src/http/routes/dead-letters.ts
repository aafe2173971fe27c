import { Hono } from "hono";
import * as z from "zod/mini";
import { JobsError } from "../../errors.js";
import { discardDeadLetter } from "../../store/admin/dead-letter-discard.js";
import { getDeadLetter } from "../../store/admin/dead-letter-get.js";
import { listDeadLetters } from "../../store/admin/dead-letters-list.js";
import { bulkReplay, MAX_BULK_REPLAY } from "../../store/admin/replay-bulk.js";
import { replayDeadLetter } from "../../store/admin/replay.js";
import { describeIssues } from "../../payload.js";
import { readJson } from "../body.js";
import { type ApiConfig, type ApiEnv, notifyEnqueued } from "../api-context.js";
import { ApiError } from "../api-errors.js";
import { intParam, queryParams } from "../params.js";

// zod/mini: the worker bundle carries no more of zod than these few checks need.
export const ReplayBody = z.strictObject({ payload: z.optional(z.unknown()) });
export const BulkReplayBody = z.union([
  z.strictObject({ ids: z.array(z.string()).check(z.minLength(1), z.maxLength(MAX_BULK_REPLAY)) }),
  z.strictObject({
    job: z.string().check(z.minLength(1)),
    reason: z.optional(z.string().check(z.minLength(1))),
    limit: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_BULK_REPLAY))),
  }),
]);

const badBody = (message: string, issues: z.core.$ZodIssue[]) =>
  new JobsError("invalid_options", message, { issues: describeIssues(issues) });

export const deadLetterRoutes = (config: ApiConfig) => {
  const r = new Hono<ApiEnv>();

  r.get("/dead-letters", async (c) => {
    const q = queryParams(c, ["job", "reason", "limit", "cursor"]);
    const jobs = await c.get("jobs")();
    return c.json(
      await listDeadLetters(jobs.db, jobs.tables, { job: q.job, reason: q.reason, limit: intParam(q.limit, "limit"), cursor: q.cursor }),
    );
  });

  // Registered before `/:id` routes so "replay" is never read as an id.
  r.post("/dead-letters/replay", async (c) => {
    const parsed = z.safeParse(BulkReplayBody, await readJson(c, config.maxBodyBytes));
    if (!parsed.success) {
      throw badBody(`send { "ids": [...] } (1 to ${MAX_BULK_REPLAY}) or { "job": name, "reason"?: reason, "limit"?: n }`, parsed.error.issues);
    }
    const jobs = await c.get("jobs")();
    const result = await bulkReplay(jobs.db, jobs.tables, parsed.data);
    await notifyEnqueued(config, c, result.replayed, true);
    return c.json(result);
  });

  r.get("/dead-letters/:id", async (c) => {
    const id = c.req.param("id");
    const jobs = await c.get("jobs")();
    const dead = await getDeadLetter(jobs.db, jobs.tables, id);
    if (!dead) throw new ApiError("not_found", `no dead letter ${id}`, { id });
    return c.json(dead);
  });

  r.post("/dead-letters/:id/replay", async (c) => {
    const id = c.req.param("id");
    const body = await readJson(c, config.maxBodyBytes, { optional: true });
    const parsed = z.safeParse(ReplayBody, body ?? {});
    if (!parsed.success) throw badBody(`send no body, or { "payload": ... } to replay with an edited payload`, parsed.error.issues);
    const edit = parsed.data;
    const jobs = await c.get("jobs")();
    let result: { id: string } | null;
    if ("payload" in edit) {
      result = await replayDeadLetter(jobs.db, jobs.tables, id, {
        payload: edit.payload,
        registry: jobs.registry,
        maxPayloadBytes: jobs.settings.maxPayloadBytes,
      });
    } else {
      result = await replayDeadLetter(jobs.db, jobs.tables, id);
    }
    if (!result) throw new ApiError("not_found", `no dead letter ${id} (it may have been replayed or discarded already)`, { id });
    await notifyEnqueued(config, c, [result.id], true);
    return c.json({ id: result.id, replayed: true });
  });

  r.delete("/dead-letters/:id", async (c) => {
    const id = c.req.param("id");
    const jobs = await c.get("jobs")();
    if (!(await discardDeadLetter(jobs.db, jobs.tables, id))) throw new ApiError("not_found", `no dead letter ${id}`, { id });
    return c.json({ id, discarded: true });
  });

  return r;
};

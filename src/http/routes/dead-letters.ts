import * as z from "zod/mini";
import { JobsError } from "../../errors.js";
import { describeIssues } from "../../payload.js";
import { MAX_BULK_REPLAY } from "../../store/admin/replay-bulk.js";
import { type Handlers, jobsOf, notifyEnqueued } from "../api-context.js";
import { readJson } from "../body.js";
import { intParam, queryParams } from "../params.js";

// zod/mini: the worker bundle carries no more of zod than these few checks need.
const ReplayBody = z.strictObject({ payload: z.optional(z.unknown()), replays: z.optional(z.int().check(z.minimum(0))) });
const BulkReplayBody = z.union([
  z.strictObject({ ids: z.array(z.string()).check(z.minLength(1), z.maxLength(MAX_BULK_REPLAY)) }),
  // A filter, as the library takes it: {} is every job's letters.
  z.strictObject({
    job: z.optional(z.string().check(z.minLength(1))),
    reason: z.optional(z.string().check(z.minLength(1))),
    limit: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_BULK_REPLAY))),
    cursor: z.optional(z.string().check(z.minLength(1))),
  }),
]);
const DiscardManyBody = z.strictObject({ ids: z.array(z.string()).check(z.minLength(1), z.maxLength(MAX_BULK_REPLAY)) });

/** With `field`, the first issue's path, as the library names a bad option (`replays`, `limit`). */
const badBody = (message: string, issues: z.core.$ZodIssue[]) => {
  const field = issues[0]?.path.join(".");
  return new JobsError("invalid_options", message, { ...(field ? { field } : {}), issues: describeIssues(issues) });
};

export const deadLetterHandlers: Handlers<
  "deadLetters.list" | "deadLetters.replayMany" | "deadLetters.discardMany" | "deadLetters.get" | "deadLetters.replay" | "deadLetters.discard"
> = {
  async "deadLetters.list"(c) {
    const q = queryParams(c, "deadLetters.list");
    const jobs = await jobsOf(c);
    return c.json(await jobs.deadLetters.list({ job: q.job, reason: q.reason, limit: intParam(q.limit, "limit"), cursor: q.cursor }));
  },

  async "deadLetters.replayMany"(c, config) {
    const parsed = z.safeParse(BulkReplayBody, await readJson(c, config.maxBodyBytes));
    if (!parsed.success) {
      throw badBody(`send { "ids": [...] } (1 to ${MAX_BULK_REPLAY}) or a filter { "job"?: name, "reason"?: reason, "limit"?: n, "cursor"?: nextCursor }`, parsed.error.issues);
    }
    const result = await (await jobsOf(c)).deadLetters.replayMany(parsed.data);
    await notifyEnqueued(config, c, result.replayed, true);
    return c.json(result);
  },

  async "deadLetters.discardMany"(c, config) {
    const parsed = z.safeParse(DiscardManyBody, await readJson(c, config.maxBodyBytes));
    if (!parsed.success) throw badBody(`send { "ids": [...] } (1 to ${MAX_BULK_REPLAY})`, parsed.error.issues);
    return c.json(await (await jobsOf(c)).deadLetters.discardMany(parsed.data.ids));
  },

  async "deadLetters.get"(c) {
    const id = c.req.param("id")!;
    const dead = await (await jobsOf(c)).deadLetters.get(id);
    if (!dead) throw new JobsError("not_found", `no dead letter ${id}`, { id });
    return c.json(dead);
  },

  async "deadLetters.replay"(c, config) {
    const body = await readJson(c, config.maxBodyBytes, { optional: true });
    // No body replays as it was; a body of JSON null is a body, and not an object.
    const parsed = z.safeParse(ReplayBody, body === undefined ? {} : body);
    if (!parsed.success) {
      throw badBody(`send no body, or { "payload"?: ..., "replays"?: n }: an edited payload, and the letter's replays as you saw them`, parsed.error.issues);
    }
    const { replays } = parsed.data;
    const options = { ...("payload" in parsed.data ? { payload: parsed.data.payload } : {}), ...(replays !== undefined ? { replays } : {}) };
    const result = await (await jobsOf(c)).deadLetters.replay(c.req.param("id")!, options);
    await notifyEnqueued(config, c, [result.id], true);
    return c.json(result);
  },

  async "deadLetters.discard"(c) {
    return c.json(await (await jobsOf(c)).deadLetters.discard(c.req.param("id")!));
  },
};

import { storedDueNow } from "../../due-now.js";
import type { EnqueueItem } from "../../enqueue.js";
import { JobsError } from "../../errors.js";
import { JOB_STATUSES, type JobStatus } from "../../terms.js";
import { type Handlers, jobsOf, notifyEnqueued } from "../api-context.js";
import { readJson } from "../body.js";
import { idempotencyKeyOf } from "../idempotency.js";
import { intParam, queryParams } from "../params.js";

export const MAX_BATCH = 1_000;

const invalid = (message: string, details: Record<string, unknown>) => new JobsError("invalid_options", message, details);

/**
 * One item of an enqueue body, as the library takes it: JSON's null is "not given" for every field but the
 * payload. Everything else (an unknown or misspelt field, what each option must be, the payload) is the
 * library's enqueue to check, item by item in order, with the codes, messages and fields it gives any caller:
 * a check of its own here said less ("each job must be { ... }"), named other fields, and reported a later
 * item's mistake before an earlier one's.
 */
const toItem = (raw: unknown, where: Record<string, unknown>): EnqueueItem => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw invalid("each job must be an object { job, payload, runAt?, delayMs?, idempotencyKey?, maxAttempts?, priority?, correlationId?, debounce? }", where);
  }
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v === null && k !== "payload" ? undefined : v])) as unknown as EnqueueItem;
};

export const jobHandlers: Handlers<"enqueue" | "list" | "get" | "cancel" | "run"> = {
  async enqueue(c, config) {
    const body = await readJson(c, config.maxBodyBytes);
    const header = c.req.header("idempotency-key");
    const batch = Array.isArray(body);
    if (batch && body.length > MAX_BATCH) throw invalid(`a batch holds at most ${MAX_BATCH} jobs`, { count: body.length });
    // An empty batch stores nothing, as the library's enqueueMany([]) (it was a 422 here, [] there).
    if (batch && body.length === 0) return c.json({ items: [] }, 200);
    if (batch && header !== undefined) {
      throw invalid("the Idempotency-Key header is for one job; give each batch item its own idempotencyKey", { field: "Idempotency-Key" });
    }
    const items = (batch ? body : [body]).map((raw, index) => toItem(raw, batch ? { index } : {}));
    if (header !== undefined) items[0] = { ...items[0]!, idempotencyKey: idempotencyKeyOf(c, items[0]!.idempotencyKey) };
    const results = await (await jobsOf(c)).enqueueUnchecked(items, { batch });
    // New jobs and those a debounce rewrote (their time may now be due); a duplicate changed nothing.
    const fresh = results.flatMap((res) => (res.deduplicated ? [] : [res.id]));
    await notifyEnqueued(config, c, fresh, storedDueNow(items, results));
    // Created only when a row was stored: a debounce that moved a queued job, like a duplicate, made none.
    const status = results.some((res) => !res.deduplicated && res.debounced !== true) ? 201 : 200;
    const shape = (res: (typeof results)[number]) => ({ id: res.id, deduplicated: res.deduplicated, ...(res.debounced !== undefined ? { debounced: res.debounced } : {}) });
    if (batch) return c.json({ items: results.map(shape) }, status);
    return c.json(shape(results[0]!), status);
  },

  async list(c) {
    const q = queryParams(c, "list");
    if (q.status !== undefined && !(JOB_STATUSES as readonly string[]).includes(q.status)) {
      throw invalid("status must be queued or running (dead jobs are under /api/dead-letters)", { field: "status" });
    }
    const jobs = await jobsOf(c);
    return c.json(await jobs.list({ job: q.job, status: q.status as JobStatus | undefined, limit: intParam(q.limit, "limit"), cursor: q.cursor }));
  },

  async get(c) {
    const id = c.req.param("id")!;
    const job = await (await jobsOf(c)).get(id);
    if (!job) throw new JobsError("not_found", `no job ${id}: never enqueued, or older than the run history keeps`, { id });
    return c.json(job);
  },

  async cancel(c) {
    return c.json(await (await jobsOf(c)).cancel(c.req.param("id")!));
  },

  async run(c, config) {
    const done = await (await jobsOf(c)).run(c.req.param("id")!);
    if (done.moved) await notifyEnqueued(config, c, [done.id], true);
    return c.json(done);
  },
};

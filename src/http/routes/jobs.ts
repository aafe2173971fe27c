import * as z from "zod/mini";
import { storedDueNow } from "../../due-now.js";
import type { EnqueueItem } from "../../enqueue.js";
import { JobsError } from "../../errors.js";
import { describeIssues } from "../../payload.js";
import { JOB_STATUSES, type JobStatus } from "../../terms.js";
import { type Handlers, jobsOf, notifyEnqueued } from "../api-context.js";
import { readJson } from "../body.js";
import { idempotencyKeyOf } from "../idempotency.js";
import { intParam, queryParams } from "../params.js";

export const MAX_BATCH = 1_000;

/** One enqueue request. Unknown fields are refused: a misspelt `runat` must not silently run the job now. */
export const EnqueueBody = z.strictObject({
  job: z.string(),
  payload: z.optional(z.unknown()),
  runAt: z.nullish(z.string()),
  delayMs: z.nullish(z.number()),
  idempotencyKey: z.nullish(z.string()),
  maxAttempts: z.nullish(z.number()),
  priority: z.nullish(z.number()),
  correlationId: z.nullish(z.string()),
  debounce: z.nullish(z.strictObject({ key: z.string(), delayMs: z.number() })),
});

const invalid = (message: string, details: Record<string, unknown>) => new JobsError("invalid_options", message, details);

/**
 * Checks the envelope of one item. The values themselves (a payload PostgreSQL cannot store,
 * a runAt out of range, a bad key) are checked by the library's enqueue, like any other caller's.
 */
const toItem = (raw: unknown, where: Record<string, unknown>): EnqueueItem => {
  const parsed = z.safeParse(EnqueueBody, raw);
  if (!parsed.success) {
    // The field, as every other invalid_options names it: the first issue's path, or the first unknown key.
    const [first] = parsed.error.issues;
    const unknown = first?.code === "unrecognized_keys" ? first.keys[0] : undefined;
    const field = first ? [...first.path, ...(unknown !== undefined ? [unknown] : [])].map(String).join(".") : "";
    const shape = "each job must be { job, payload, runAt?, delayMs?, idempotencyKey?, maxAttempts?, priority?, correlationId?, debounce? }";
    throw invalid(unknown !== undefined ? `unknown field ${JSON.stringify(field)}: ${shape}` : shape, {
      ...where,
      ...(field ? { field } : {}),
      issues: describeIssues(parsed.error.issues),
    });
  }
  const b = parsed.data;
  return {
    job: b.job,
    payload: b.payload,
    runAt: b.runAt ?? undefined,
    delayMs: b.delayMs ?? undefined,
    idempotencyKey: b.idempotencyKey ?? undefined,
    maxAttempts: b.maxAttempts ?? undefined,
    priority: b.priority ?? undefined,
    correlationId: b.correlationId ?? undefined,
    debounce: b.debounce ?? undefined,
  };
};

export const jobHandlers: Handlers<"enqueue" | "list" | "get" | "cancel" | "run"> = {
  async enqueue(c, config) {
    const body = await readJson(c, config.maxBodyBytes);
    const header = c.req.header("idempotency-key");
    const batch = Array.isArray(body);
    if (batch && (body.length === 0 || body.length > MAX_BATCH)) {
      throw invalid(`a batch holds 1 to ${MAX_BATCH} jobs`, { count: body.length });
    }
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
    if (!job) throw new JobsError("not_found", `no job ${id}: never enqueued, cancelled, or older than the run history keeps`, { id });
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

// Your jobs: the one module `npm run dev`, the `pgtick` CLI, `npm run migrate:deploy` and both
// platforms' entrypoints build their queue from. Replace these examples with your own.
// zod/mini keeps the worker bundle small; `import { z } from "zod"` works the same with the library.
import * as z from "zod/mini";
import { type AnyJobs, type Db, defineJob, defineSchedule } from "pgtick";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export const jobs = [
  /** Runs at once: enqueued with no delay. */
  defineJob({
    name: "send-welcome",
    schema: z.object({ email: z.email(), name: z.string().check(z.minLength(1)) }),
    handler: async ({ email, name }, ctx) => ctx.log("info", "welcome email sent", { email, name }),
  }),
  /** Enqueued with a delay: it waits in the queue, visible in the dashboard, until it is due. */
  defineJob({
    name: "send-reminder",
    schema: z.object({ email: z.email(), about: z.string() }),
    handler: async ({ email, about }, ctx) => ctx.log("info", "reminder sent", { email, about }),
  }),
  /** Enqueued by the schedule below, every minute of Tokyo time. */
  defineJob({
    name: "tokyo-digest",
    schema: z.object({ edition: z.string() }),
    handler: async ({ edition }, ctx) => {
      const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", timeStyle: "short" }).format(new Date());
      ctx.log("info", "digest built", { edition, tokyoTime: local });
    },
  }),
  /** Always fails, as an upstream outage would: retried once, then a dead letter to inspect and replay. */
  defineJob({
    name: "sync-inventory",
    schema: z.object({ sku: z.string() }),
    maxAttempts: 2,
    backoff: { baseMs: 1_000, maxMs: 1_000 },
    handler: async ({ sku }) => {
      throw new Error(`inventory service answered 503 for ${sku}`);
    },
  }),
  /** A long job that stops when asked: the deadline (or Ctrl-C on `npm run dev`) aborts `ctx.signal`, and it is requeued. */
  defineJob({
    name: "build-report",
    schema: z.object({ seconds: z.number().check(z.minimum(0), z.maximum(600)) }),
    handler: async ({ seconds }, ctx) => {
      await sleep(seconds * 1_000, ctx.signal);
      ctx.log("info", "report built", { seconds });
    },
  }),
  /** Writes a row with the tick's own connection (`ctx.db`): the visible side effect a deployment check looks for. */
  defineJob({
    name: "example.record",
    schema: z.object({ note: z.string().check(z.minLength(1), z.maxLength(200)) }),
    handler: async ({ note }, ctx) => {
      await ctx.db.query("INSERT INTO example_events (job_id, note, attempt) VALUES ($1, $2, $3)", [ctx.jobId, note, ctx.attempt]);
    },
  }),
  /** Always fails: retried once, then dead-lettered. */
  defineJob({
    name: "example.fail",
    schema: z.object({ reason: z._default(z.string().check(z.maxLength(200)), "example failure") }),
    maxAttempts: 2,
    backoff: { baseMs: 10, maxMs: 10 },
    handler: ({ reason }) => {
      throw new Error(reason);
    },
  }),
  /** Waits `ms`, giving up when the deadline aborts it: a job longer than the budget is requeued. */
  defineJob({
    name: "example.sleep",
    schema: z.object({ ms: z.int().check(z.minimum(0), z.maximum(3_600_000)) }),
    handler: ({ ms }, ctx) => sleep(ms, ctx.signal),
  }),
] as const;

export const schedules = [
  // Read in Tokyo time; "0 9 * * 1-5" would be 09:00 on weekdays there, whatever the server's zone.
  defineSchedule({ name: "tokyo-digest", cron: "* * * * *", timezone: "Asia/Tokyo", job: "tokyo-digest", payload: { edition: "minutely" } }),
];

/** What `npm run dev` enqueues when it has just created the tables: one job of each kind to watch. */
export const seed = async (queue: AnyJobs): Promise<void> => {
  await queue.enqueueUnchecked([{ job: "send-welcome", payload: { email: "ada@example.com", name: "Ada" }, idempotencyKey: "seed-welcome-ada" }]);
  await queue.enqueueUnchecked([{ job: "send-reminder", payload: { email: "ada@example.com", about: "finish your profile" }, delayMs: 30_000 }]);
  await queue.enqueueUnchecked([{ job: "sync-inventory", payload: { sku: "SKU-42" } }]);
};

/** The examples' own table, made by `npm run migrate:deploy` (and the dev server) after the library's migrations. */
export const setup = async (db: Db): Promise<void> => {
  await db.query(`CREATE TABLE IF NOT EXISTS example_events (
    job_id uuid NOT NULL,
    note text NOT NULL,
    attempt integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
  )`);
};

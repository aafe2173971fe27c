// The jobs `npm run dev` runs, one per feature, so the dashboard shows the whole
// life of a job within a minute of starting. Also a jobs module for the CLI:
//   npm run -s cli -- enqueue --jobs examples/jobs.ts send-welcome '{"email":"ada@example.com","name":"Ada"}'
import { z } from "zod";
import { defineJob, defineSchedule, type Jobs } from "../src/index.js";

/** Runs at once: enqueued with no delay. */
export const sendWelcome = defineJob({
  name: "send-welcome",
  schema: z.object({ email: z.email(), name: z.string().min(1) }),
  handler: async ({ email, name }, ctx) => {
    ctx.log("info", "welcome email sent", { email, name });
  },
});

/** Enqueued with a delay: it waits in the queue, visible in the dashboard, until it is due. */
export const sendReminder = defineJob({
  name: "send-reminder",
  schema: z.object({ email: z.email(), about: z.string() }),
  handler: async ({ email, about }, ctx) => {
    ctx.log("info", "reminder sent", { email, about });
  },
});

/** Enqueued by the schedule below, every minute of Tokyo time. */
export const tokyoDigest = defineJob({
  name: "tokyo-digest",
  schema: z.object({ edition: z.string() }),
  handler: async ({ edition }, ctx) => {
    const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Tokyo", timeStyle: "short" }).format(new Date());
    ctx.log("info", "digest built", { edition, tokyoTime: local });
  },
});

/** Always fails, as an upstream outage would: retried once, then a dead letter to inspect and replay. */
export const syncInventory = defineJob({
  name: "sync-inventory",
  schema: z.object({ sku: z.string() }),
  maxAttempts: 2,
  backoff: { baseMs: 1_000, maxMs: 1_000 },
  handler: async ({ sku }) => {
    throw new Error(`inventory service answered 503 for ${sku}`);
  },
});

/**
 * A long job that stops when asked: the tick's deadline (or Ctrl-C on `npm run dev`)
 * aborts `ctx.signal`, and the tick puts the job back in the queue to run again.
 */
export const buildReport = defineJob({
  name: "build-report",
  schema: z.object({ seconds: z.number().min(0).max(600) }),
  handler: async ({ seconds }, ctx) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, seconds * 1_000);
      ctx.signal.addEventListener("abort", () => (clearTimeout(timer), reject(ctx.signal.reason)), { once: true });
    });
    ctx.log("info", "report built", { seconds });
  },
});

export const jobs = [sendWelcome, sendReminder, tokyoDigest, syncInventory, buildReport] as const;

export const schedules = [
  // Read in Tokyo time; "0 9 * * 1-5" would be 09:00 on weekdays there, whatever the server's zone.
  defineSchedule({ name: "tokyo-digest", cron: "* * * * *", timezone: "Asia/Tokyo", job: "tokyo-digest", payload: { edition: "minutely" } }),
];

/** What `npm run dev` enqueues when it has just created the tables: one job of each kind. */
export const seed = async (j: Jobs<typeof jobs>): Promise<void> => {
  await j.enqueue("send-welcome", { email: "ada@example.com", name: "Ada" }, { idempotencyKey: "seed-welcome-ada" });
  await j.enqueue("send-reminder", { email: "ada@example.com", about: "finish your profile" }, { delayMs: 30_000 });
  await j.enqueue("sync-inventory", { sku: "SKU-42" });
};

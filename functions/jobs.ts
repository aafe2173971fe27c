// The jobs this deployment runs. Replace these examples with your own: every
// entrypoint (the Vercel functions and the Cloudflare worker) builds its jobs here.
// zod/mini keeps the worker bundle small; `import * as z from "zod"` works the same with the library.
// zod/mini loads no error messages of its own: English ones, for the API's invalid_payload details.
import en from "zod/v4/locales/en.js";
import * as z from "zod/mini";

z.config(en());
import { type AnyJob, createJobs, type Db, defineJob, type Jobs, type JobsSettings, jsonLogger, type ScheduleDefinition } from "../src/index.js";

/** The examples' own table (created by `setupDeployment`). */
export const EXAMPLE_SETUP_SQL = `CREATE TABLE IF NOT EXISTS example_events (
  job_id uuid NOT NULL,
  note text NOT NULL,
  attempt integer NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
)`;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export const exampleJobs = (db: Db) =>
  [
    /** Writes a row: the visible side effect a deployment check looks for. */
    defineJob({
      name: "example.record",
      schema: z.object({ note: z.string().check(z.minLength(1), z.maxLength(200)) }),
      handler: async (payload, ctx) => {
        await db.query("INSERT INTO example_events (job_id, note, attempt) VALUES ($1, $2, $3)", [ctx.jobId, payload.note, ctx.attempt]);
      },
    }),
    /** Always fails: retried once, then dead-lettered. */
    defineJob({
      name: "example.fail",
      schema: z.object({ reason: z._default(z.string().check(z.maxLength(200)), "example failure") }),
      maxAttempts: 2,
      backoff: { baseMs: 10, maxMs: 10 },
      handler: (payload) => {
        throw new Error(payload.reason);
      },
    }),
    /** Waits `ms`, giving up when the tick's deadline aborts it: a job longer than the budget is requeued. */
    defineJob({
      name: "example.sleep",
      schema: z.object({ ms: z.int().check(z.minimum(0), z.maximum(3_600_000)) }),
      handler: (payload, ctx) => sleep(payload.ms, ctx.signal),
    }),
  ] as const;

/** Your own tables, if your jobs need any: `npm run migrate:deploy` runs this after the library's migrations. */
export const setupDeployment = async (db: Db): Promise<void> => {
  await db.query(EXAMPLE_SETUP_SQL);
};

/** Recurring jobs (see `defineSchedule`); the tick keeps the schedules table in step with this list. */
export const exampleSchedules: ScheduleDefinition[] = [];

/** The deployment's jobs on one invocation's connection (the entrypoints take names from HTTP, so untyped). */
export const deploymentJobs = (db: Db, settings: JobsSettings): Jobs<readonly AnyJob[]> =>
  createJobs({ db, jobs: exampleJobs(db) as readonly AnyJob[], schedules: exampleSchedules, settings, logger: jsonLogger() });

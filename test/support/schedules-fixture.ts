// The schedule suites' shared setup against a real PostgreSQL: a database per test file, and per
// test a queue under its own table prefix with a settable clock, so tests never share schedules.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, memoryLogger, PermanentJobError, type Db, type ScheduleDefinition } from "../../src/index.js";
import { tablesFor } from "../../src/store/shared/tables.js";
import { harness } from "./harness.js";

export const MIN = 60_000;

export const hourly = (name: string, extra: Partial<ScheduleDefinition> = {}): ScheduleDefinition => ({
  name, cron: "0 * * * *", job: "report", payload: { kind: name }, ...extra,
});

/** Ticks every `stepMs` of the fake clock from `from` to `to`. */
export const tickThrough = async (jobs: { tick: (o?: object) => Promise<unknown> }, w: { clock: { t: number } }, from: string, to: string, stepMs: number) => {
  for (w.clock.t = Date.parse(from); w.clock.t <= Date.parse(to); w.clock.t += stepMs) await jobs.tick({ budgetMs: 10_000 });
};

/** A database named after the test file, and `world` to build each test's queue on it. */
export const schedulesFixture = async (name: string) => {
  const h = await harness(name);
  let prefixes = 0;

  /** A queue under its own table prefix (so tests do not share schedules), a settable clock and a record of runs. */
  const world = async (start: string, options: { fail?: boolean; graceMs?: number } = {}) => {
    const prefix = `s${++prefixes}_`;
    const clock = { t: Date.parse(start) };
    const runs: string[] = [];
    const report = defineJob({
      name: "report",
      schema: z.object({ kind: z.string() }),
      maxAttempts: 1,
      handler: (_p, ctx) => {
        runs.push(ctx.correlationId ?? "none");
        if (options.fail) throw new PermanentJobError("upstream gone");
      },
    });
    const make = (schedules: ScheduleDefinition[], db: Db | pg.Pool = h.main, settings: { maxTicks?: number } = {}) => {
      const logger = memoryLogger();
      const jobs = createJobs({
        db, jobs: [report], schedules, logger, random: () => 0.5,
        settings: { tablePrefix: prefix, leaseMarginMs: 1_000, ...settings },
        scheduleOptions: { now: () => new Date(clock.t), graceMs: options.graceMs },
      });
      return Object.assign(jobs, { logs: logger.entries });
    };
    await make([]).migrate();
    const t = tablesFor(prefix);
    const set = (iso: string) => void (clock.t = Date.parse(iso));
    const advance = (ms: number) => void (clock.t += ms);
    return { make, runs, clock, set, advance, t, prefix };
  };

  return { h, world };
};

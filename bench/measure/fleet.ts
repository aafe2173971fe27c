// Fan-out across invocations: a backlog of short sleeping jobs drained by real tick
// invocations, each with its own pool and createJobs as a platform's would, in this process.
// The first tick is a cron delivery; every other one is started through `spawn` for a slot
// a tick reserved (fan-out when more is due, continuation at a tick's cutoff). Measured for
// JOBS_MAX_TICKS = 1, 2, 4, 8 on one backlog size, against the ideal of K times one tick.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, type Handoff, silentLogger, type TickReport } from "../../src/index.js";
import { round } from "../stats.js";
import { chunks } from "../systems/system.js";

export interface FleetLevel {
  readonly maxTicks: number;
  readonly jobsPerSec: number;
  readonly seconds: number;
  /** jobs/s over K = 1's. */
  readonly speedup: number;
  /** jobs/s over K x concurrency x (1000 / job ms), what K ticks could do with no overhead at all. */
  readonly ofIdeal: number;
  /** Tick invocations started: the cron's, fan-out and continuations (capped ones included). */
  readonly invocations: number;
  /** Invocations that found every slot taken and returned at once. */
  readonly capped: number;
  /** The most tick slots held at once, sampled every 50 ms. */
  readonly peakTicks: number;
  readonly peakHandlers: number;
  /** Cron deliveries needed beyond the first (the fleet stopped with work left). */
  readonly extraCron: number;
}

export interface FleetPlan {
  readonly jobs: number;
  readonly jobMs: number;
  readonly concurrency: number;
  readonly levels: readonly number[];
  readonly chunk: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const measureFleet = async (url: string, plan: FleetPlan, progress: (line: string) => void): Promise<FleetLevel[]> => {
  let handlers = 0;
  let peakHandlers = 0;
  const work = defineJob({
    name: "sleep",
    schema: z.object({ i: z.number() }),
    handler: async () => {
      peakHandlers = Math.max(peakHandlers, ++handlers);
      await sleep(plan.jobMs);
      handlers--;
    },
  });
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on("error", () => {});
  const queue = createJobs({ db: admin, jobs: [work], logger: silentLogger });
  await queue.migrate();
  const remaining = async () => Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${queue.tables.queue}`)).rows[0]!.n);
  const levels: FleetLevel[] = [];
  try {
    for (const maxTicks of plan.levels) {
      for (const items of chunks(plan.jobs, plan.chunk, (i) => ({ job: "sleep" as const, payload: { i } }))) await queue.enqueueMany(items);
      await admin.query(`VACUUM (ANALYZE) ${queue.tables.queue}`);
      handlers = 0;
      peakHandlers = 0;
      const running = new Set<Promise<TickReport | undefined>>();
      let invocations = 0;
      let capped = 0;
      let peakTicks = 0;
      let failure: unknown;
      // One invocation: its own connections and queue object, closed before it returns.
      const invoke = (handoff?: Handoff) => {
        invocations++;
        const task = (async () => {
          const pool = new pg.Pool({ connectionString: url, max: 2 });
          pool.on("error", () => {});
          const jobs = createJobs({ db: pool, jobs: [work], logger: silentLogger, settings: { maxTicks, concurrency: plan.concurrency } });
          try {
            const report = await jobs.tick({ handoff, spawn: (handoffs) => handoffs.forEach((h) => invoke(h)) });
            if (report.capped) capped++;
            return report;
          } catch (error) {
            failure ??= error;
            return undefined;
          } finally {
            await pool.end();
          }
        })();
        running.add(task);
        void task.finally(() => running.delete(task));
      };
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${queue.tables.ticks} WHERE expires_at > now() AND NOT reserved`);
          peakTicks = Math.max(peakTicks, rows[0]!.n);
          await sleep(50);
        }
      })();
      const started = performance.now();
      let extraCron = -1;
      try {
        // A cron delivery, and another whenever the fleet stopped with work left (a platform's next minute).
        while ((await remaining()) > 0 && failure === undefined && extraCron < 5) {
          extraCron++;
          invoke();
          while (running.size > 0) await Promise.allSettled([...running]);
        }
      } finally {
        sampling = false;
        await sampler;
      }
      const seconds = (performance.now() - started) / 1000;
      if (failure !== undefined) throw failure;
      const left = await remaining();
      if (left > 0) throw new Error(`fleet K=${maxTicks}: ${left} jobs left after ${extraCron + 1} cron deliveries`);
      const jobsPerSec = plan.jobs / seconds;
      const ideal = maxTicks * plan.concurrency * (1000 / plan.jobMs);
      const level: FleetLevel = {
        maxTicks,
        jobsPerSec: Math.round(jobsPerSec),
        seconds: round(seconds, 1),
        speedup: levels[0] ? round(jobsPerSec / levels[0].jobsPerSec, 2) : 1,
        ofIdeal: round(jobsPerSec / ideal, 2),
        invocations,
        capped,
        peakTicks,
        peakHandlers,
        extraCron,
      };
      levels.push(level);
      progress(
        `fleet  JOBS_MAX_TICKS=${maxTicks}  ${level.jobsPerSec} jobs/s  x${level.speedup} of K=1  ${Math.round(level.ofIdeal * 100)}% of ideal  ` +
          `${invocations} invocations (${capped} capped), peak ${peakTicks} ticks / ${peakHandlers} handlers`,
      );
    }
    return levels;
  } finally {
    await admin.end();
  }
};

// pgtick itself: jobs enqueued with enqueueMany, drained by ticks.
import pg from "pg";
import { z } from "zod";
import { countingDb, createJobs, defineJob, fromPg, type JobsSettingsInput, silentLogger } from "../../src/index.js";
import { chunks, type DrainSystem, payloadOf } from "./system.js";

export const NOOP_SCHEMA = z.object({ i: z.number() });
export const noop = defineJob({ name: "noop", schema: NOOP_SCHEMA, handler: () => {} });
/** The no-op job, or the same job with limits (flow control): same name, payloads and handler. */
export type NoopJob = typeof noop;

/** How one of our queues is set up: which no-op job, and settings over the defaults. */
export interface OurSetup {
  readonly job?: NoopJob;
  readonly settings?: JobsSettingsInput;
}

export const ourJobs = (pool: pg.Pool, concurrency = 10, setup: OurSetup = {}) => {
  const db = countingDb(fromPg(pool));
  const jobs = createJobs({ db, jobs: [setup.job ?? noop], logger: silentLogger, settings: { concurrency, ...setup.settings } });
  return { db, jobs };
};

/**
 * Our queue in its own database, migrated, with what both of our systems (the tick and
 * the bare step loop) share: filling it with enqueueMany, counting what is left, closing.
 */
export const ourQueue = async (url: string, database: string, setup: OurSetup = {}) => {
  // A tick has up to two statements in flight, so it needs two connections; the third is for checks.
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  const { jobs, db } = ourJobs(pool, 10, setup);
  await jobs.migrate();
  const shared: Pick<DrainSystem, "recommended" | "database" | "fill" | "remaining" | "reset" | "close"> = {
    recommended: true,
    database,
    async fill(n, chunk) {
      for (const items of chunks(n, chunk, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
    },
    async remaining() {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`);
      return rows[0]?.n ?? -1;
    },
    async reset() {},
    close: () => pool.end(),
  };
  return { pool, jobs, shared };
};

/** Ours drained by one tick invocation at a time (no fan-out): the per-invocation figure the peers are compared with. */
export const ours = async (url: string, database: string, setup: OurSetup & { readonly variant?: string } = {}): Promise<DrainSystem> => {
  const { jobs, shared } = await ourQueue(url, database, setup);
  return {
    ...shared,
    name: "ours",
    variant: setup.variant ?? "tick",
    async drain(n, concurrency) {
      const started = performance.now();
      let done = 0;
      let ticks = 0;
      while (done < n) {
        ticks++;
        const report = await jobs.tick({ budgetMs: 600_000, concurrency });
        done += report.succeeded;
        if (report.claimed === 0 && report.succeeded === 0) throw new Error(`ours: queue empty after ${done} of ${n} jobs`);
      }
      return { ms: performance.now() - started, ticks };
    },
  };
};

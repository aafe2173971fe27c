// pgtick itself: jobs enqueued with enqueueMany, drained by ticks.
import pg from "pg";
import { z } from "zod";
import { countingDb, createJobs, defineJob, fromPg, silentLogger } from "../../src/index.js";
import { chunks, type DrainSystem, payloadOf } from "./system.js";

export const noop = defineJob({ name: "noop", schema: z.object({ i: z.number() }), handler: () => {} });

export const ourJobs = (pool: pg.Pool, concurrency = 10) => {
  const db = countingDb(fromPg(pool));
  const jobs = createJobs({ db, jobs: [noop], logger: silentLogger, settings: { concurrency, batchSize: concurrency } });
  return { db, jobs };
};

/**
 * Our queue in its own database, migrated, with what both of our systems (the tick and
 * the bare step loop) share: filling it with enqueueMany, counting what is left, closing.
 */
export const ourQueue = async (url: string, database: string) => {
  // A tick sends one statement at a time, so it needs one connection; the second is for checks.
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const { jobs, db } = ourJobs(pool);
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

export const ours = async (url: string, database: string): Promise<DrainSystem> => {
  const { jobs, shared } = await ourQueue(url, database);
  return {
    ...shared,
    name: "ours",
    variant: "tick",
    async drain(n, concurrency) {
      const started = performance.now();
      let done = 0;
      let ticks = 0;
      while (done < n) {
        ticks++;
        const report = await jobs.tick({ budgetMs: 600_000, concurrency, batchSize: concurrency });
        done += report.succeeded;
        if (report.claimed === 0 && report.succeeded === 0) throw new Error(`ours: queue empty after ${done} of ${n} jobs`);
      }
      return { ms: performance.now() - started, ticks };
    },
  };
};

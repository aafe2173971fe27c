// The idle tick: what a platform cron pays every minute when nothing is due.
import pg from "pg";
import { ourJobs } from "../systems/ours.js";
import { median, percentile } from "../stats.js";

export interface IdleTickResult {
  /** Statements one idle tick sends (the tick's own count; the driver count must agree). */
  readonly statements: number;
  readonly driverStatements: number;
  /** Median wall time of an idle tick. */
  readonly ms: number;
  readonly p99Ms: number;
}

export const measureIdleTick = async (url: string, ticks: number): Promise<IdleTickResult> => {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { jobs, db } = ourJobs(pool);
    await jobs.migrate();
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`);
    if (rows[0]?.n !== 0) throw new Error("idle tick: the queue is not empty");
    await jobs.tick({ budgetMs: 10_000 }); // warm the connection and the plan cache
    const times: number[] = [];
    const statements: number[] = [];
    const driver: number[] = [];
    for (let i = 0; i < ticks; i++) {
      const before = db.statements;
      const started = performance.now();
      const report = await jobs.tick({ budgetMs: 10_000 });
      times.push(performance.now() - started);
      statements.push(report.statements);
      driver.push(db.statements - before);
    }
    return { statements: Math.max(...statements), driverStatements: Math.max(...driver), ms: median(times), p99Ms: percentile(times, 99) };
  } finally {
    await pool.end();
  }
};

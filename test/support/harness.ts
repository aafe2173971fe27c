import pg from "pg";
import { afterAll } from "vitest";
import { createJobs, type AnyJob, type Db, type JobsSettingsInput, memoryLogger, fromPg } from "../../src/index.js";
import { freshDatabase } from "./db.js";

export type Harness = Awaited<ReturnType<typeof harness>>;

/**
 * A fresh database with the schema applied, a pg Pool, and a factory for
 * `createJobs` instances (each with its own in-memory log), all torn down
 * after the file's tests.
 */
export const harness = async (label = "t") => {
  const database = await freshDatabase(label);
  const pools: pg.Pool[] = [];
  const pool = (max = 10) => {
    const p = new pg.Pool({ connectionString: database.url, max });
    // The database is dropped WITH (FORCE) at the end; an idle client cut off then is expected.
    p.on("error", () => {});
    pools.push(p);
    return p;
  };
  const main = pool(20);
  const db: Db = fromPg(main);
  const make = <const J extends readonly AnyJob[]>(jobs: J, settings: JobsSettingsInput = {}, client: Db | pg.Pool = main) => {
    const logger = memoryLogger();
    const jobsApi = createJobs({ db: client, jobs, settings: { leaseMarginMs: 1_000, ...settings }, logger, random: () => 0.5 });
    return Object.assign(jobsApi, { logs: logger.entries });
  };
  await make([]).migrate();
  // A schema of its own (a table prefix) for one test, so tests in a file never see each other's rows.
  let isolatedCount = 0;
  const isolated = async <const J extends readonly AnyJob[]>(jobs: J, settings: JobsSettingsInput = {}, client: Db | pg.Pool = main) => {
    const j = make(jobs, { tablePrefix: `i${++isolatedCount}_`, ...settings }, client);
    await j.migrate();
    return j;
  };
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await database.drop();
  });
  const rows = async <R = Record<string, unknown>>(text: string, params: unknown[] = []) => (await db.query<R>(text, params)).rows;
  return { url: database.url, pool, main, db, make, isolated, rows };
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

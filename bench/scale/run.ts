// npm run bench -- scale [--quick]: the reads the API and the dashboard make, timed as the
// queue and the dead letters grow (10k / 100k / 1M rows each) and as the run history grows
// (to 10M rows), each as its median and its ratio to the smallest level; then claim latency
// after a drain, with autovacuum on. Tables are filled with set-based SQL, so it stays quick.
import { writeFileSync } from "node:fs";
import pg from "pg";
import { createJobs, fromPg, silentLogger } from "../../src/index.js";
import { machine } from "../machine.js";
import { startServer } from "../server.js";
import { median, round } from "../stats.js";
import { measureClaimAfterDrain } from "./claim.js";
import { fillDeadLetters, fillQueue, fillRuns } from "./fill.js";
import { type ReadApi, type ReadContext, SCALE_READS, type ScaleTable } from "./reads.js";
import { renderScale, type ScaleResults } from "./report.js";

export interface ScaleOptions {
  readonly quick: boolean;
  /** Queued jobs (and as many dead letters) per level. */
  readonly levels: readonly number[];
  /** Run history rows per level; empty skips the runs. */
  readonly runLevels: readonly number[];
  readonly drain: number;
  /** How long to wait for autovacuum to visit the queue after the drain. */
  readonly waitS: number;
  readonly out: string;
}

export const SCALE_USAGE = `usage: npm run bench -- scale [--quick] [--levels 10000,100000,1000000] [--runs 10000,100000,1000000,10000000 | --runs 0]
                               [--drain 100000] [--vacuum-wait 90] [--out bench/scale-results.json]`;

const list = (name: string, value: string | undefined): number[] => {
  const xs = (value ?? "").split(",").map(Number);
  if (xs.some((x) => !Number.isInteger(x) || x < 0)) throw new Error(`--${name} must be a list of integers, got ${JSON.stringify(value)}\n${SCALE_USAGE}`);
  return xs.filter((x) => x > 0);
};

export const parseScaleOptions = (argv: readonly string[]): ScaleOptions => {
  const values = new Map<string, string>();
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--quick") quick = true;
    else if (arg === "--help") throw new Error(SCALE_USAGE);
    else if (arg.startsWith("--") && ["levels", "runs", "drain", "vacuum-wait", "out"].includes(arg.slice(2).split("=")[0]!)) {
      const [key, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
      values.set(key, inline ?? argv[++i] ?? "");
    } else throw new Error(`unexpected argument ${JSON.stringify(arg)}\n${SCALE_USAGE}`);
  }
  const one = (name: string, fallback: number) => (values.has(name) ? list(name, values.get(name))[0] ?? 0 : fallback);
  return {
    quick,
    levels: values.has("levels") ? list("levels", values.get("levels")) : quick ? [1_000, 10_000] : [10_000, 100_000, 1_000_000],
    runLevels: values.has("runs") ? list("runs", values.get("runs")) : quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000, 10_000_000],
    drain: one("drain", quick ? 5_000 : 100_000),
    waitS: one("vacuum-wait", quick ? 0 : 90),
    out: values.get("out") ?? "bench/scale-results.json",
  };
};

/** Median ms of `run` after two warm-up calls: up to 21 samples, fewer once they add up to 3 s. */
const time = async (run: () => Promise<unknown>): Promise<number> => {
  await run();
  await run();
  const samples: number[] = [];
  let spent = 0;
  while (samples.length < 21 && (samples.length < 5 || spent < 3_000)) {
    const started = performance.now();
    await run();
    const ms = performance.now() - started;
    samples.push(ms);
    spent += ms;
  }
  return median(samples);
};

export const runScale = async (argv: readonly string[], log: (line: string) => void): Promise<ScaleResults> => {
  const options = parseScaleOptions(argv);
  const server = await startServer();
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  try {
    log(`PostgreSQL ${server.version} (${server.embedded ? "embedded" : "DATABASE_URL"})`);
    // First, while the server is quiet: later, autovacuum works through the filled tables for minutes.
    log(`claim after a drain of ${options.drain.toLocaleString("en-US")} jobs`);
    const claim = await measureClaimAfterDrain(await server.createDatabase(`bench_${tag}_drain`), { drain: options.drain, samples: 200, waitS: options.waitS }, log);
    // Each fill is vacuumed right after it commits; a vacuum cannot mark rows all-visible before their
    // commit is flushed, which the embedded server (synchronous_commit off) does up to 200 ms later.
    const pool = new pg.Pool({ connectionString: await server.createDatabase(`bench_${tag}_scale`), max: 2, options: "-c synchronous_commit=on" });
    pool.on("error", () => {});
    const db = fromPg(pool);
    const jobs = createJobs({ db, jobs: [], logger: silentLogger });
    await jobs.migrate();
    const t = jobs.tables;
    const api: ReadApi = jobs;
    const base = Date.now() - 30 * 86_400_000;
    const timings: Record<ScaleTable, Map<string, number[]>> = { queue: new Map(), runs: new Map() };
    const measure = async (table: ScaleTable) => {
      const first = await api.list({});
      const { rows } = await pool.query<{ id: string }>(`SELECT id::text AS id FROM ${t.queue} WHERE job_name = 'sync' ORDER BY id LIMIT 1 OFFSET 7`);
      const ctx: ReadContext = { api, db, prefix: t.prefix, jobId: rows[0]!.id, jobsCursor: first.nextCursor ?? "" };
      for (const read of SCALE_READS.filter((r) => r.table === table)) {
        const ms = await time(() => read.run(ctx));
        timings[table].set(read.name, [...(timings[table].get(read.name) ?? []), round(ms, 2)]);
      }
    };

    let filled = 0;
    for (const level of options.levels) {
      const started = performance.now();
      await fillQueue(pool, t, base, filled, level);
      await fillDeadLetters(pool, t, base, filled, level);
      filled = level;
      // Autovacuum would have visited by the time a backlog is read (migration 008 vacuums the queue
      // after 1,000 + 5% inserted rows): its visibility map lets the counts skip the heap.
      await pool.query(`VACUUM (ANALYZE) ${t.queue}, ${t.deadLetters}`);
      log(`${level.toLocaleString("en-US")} queued jobs and dead letters (filled in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
      await measure("queue");
    }
    let runs = 0;
    for (const level of options.runLevels) {
      const started = performance.now();
      await fillRuns(pool, t.prefix, base, runs, level, log);
      runs = level;
      await pool.query(`VACUUM (ANALYZE) ${t.prefix}runs`);
      log(`${level.toLocaleString("en-US")} runs (filled in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
      await measure("runs");
    }
    await pool.end();

    const rows = (table: ScaleTable) => [...timings[table]].map(([name, ms]) => ({ name, ms, ratio: ms.map((x) => round(x / ms[0]!, 2)) }));
    const results: ScaleResults = {
      date: new Date().toISOString(),
      machine: machine(server),
      quick: options.quick,
      levels: options.levels,
      runLevels: options.runLevels,
      reads: rows("queue"),
      runs: rows("runs"),
      claim,
    };
    writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    return results;
  } finally {
    await server.stop();
  }
};

export const mainScale = (argv: readonly string[]): void => {
  const started = Date.now();
  const stderr = (line: string) => void process.stderr.write(`${line}\n`);
  runScale(argv, stderr)
    .then((results) => {
      console.log(renderScale(results));
      stderr(`\nwrote results in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      process.exit(0);
    })
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
};

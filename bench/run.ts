// npm run bench [-- --quick]: drains, statements, idle tick, enqueue and
// latency for pgtick, side by side with pg-boss, graphile-worker and a
// bare-SQL baseline, all in one process on one PostgreSQL server; then ours
// alone: run history on vs off, flow control's cost, the fleet (fan-out across
// invocations) and new jobs starting while a tick is busy.
// npm run bench -- scale [--quick]: reads as the tables grow (bench/scale/run.ts).
import { writeFileSync } from "node:fs";
import { installDriverCounter } from "./counting.js";
import { machine } from "./machine.js";
import { measureBusyLatency } from "./measure/busy.js";
import { measureDrains } from "./measure/drain.js";
import { measureFleet } from "./measure/fleet.js";
import { measureFlow } from "./measure/flow.js";
import { measureHistory } from "./measure/history.js";
import { measureHttpEnqueue } from "./measure/http.js";
import { measureIdleTick } from "./measure/idle.js";
import { measureLatency } from "./measure/latency.js";
import { type BenchOptions, parseOptions, type SystemKey } from "./options.js";
import { loadPeers, type Peers } from "./peers.js";
import { bulkRates, drainRows, goals, ratios, render, type Results } from "./report.js";
import type { SectionResults } from "./report-sections.js";
import { mainScale } from "./scale/run.js";
import { type BenchServer, startServer } from "./server.js";
import { bareSql } from "./systems/bare-sql.js";
import { graphileWorker } from "./systems/graphile-worker.js";
import { ours } from "./systems/ours.js";
import { pgBoss } from "./systems/pg-boss.js";
import type { DrainSystem } from "./systems/system.js";

/** `peers()` installs and loads pg-boss and graphile-worker, for the systems that need them. */
const FACTORIES: Record<SystemKey, (url: string, database: string, peers: () => Promise<Peers>) => Promise<DrainSystem>> = {
  ours: (url, database) => ours(url, database),
  "bare-sql": bareSql,
  "pg-boss": async (url, database, peers) => pgBoss(await peers(), url, database),
  "graphile-worker": async (url, database, peers) => graphileWorker(await peers(), url, database, "recommended"),
  "graphile-worker-500": async (url, database, peers) => graphileWorker(await peers(), url, database, "prefetch-500"),
};

const stderr = (line: string) => void process.stderr.write(`${line}\n`);

/** Concurrency of the history and flow drains, and the fleet's per tick. */
const SECTION_CONCURRENCY = 32;
const FLEET_CONCURRENCY = 10;

/** Run history on/off, flow control's cost and the fleet, each in databases of its own. */
const measureSections = async (server: BenchServer, tag: string, o: BenchOptions, log: (line: string) => void): Promise<SectionResults> => {
  const drains = { n: o.n, concurrency: SECTION_CONCURRENCY, chunk: o.chunk };
  const history = o.skip.has("history") ? null : await measureHistory(server, tag, { ...drains, rounds: o.quick ? o.runs : o.runs + 2 }, log);
  const flow = o.skip.has("flow")
    ? null
    : await measureFlow(
        server,
        tag,
        { ...drains, rounds: o.quick ? o.runs : o.runs + 2, claimLevels: o.quick ? [10_000, 100_000] : [10_000, 1_000_000], claimSamples: o.quick ? 20 : 50 },
        log,
      );
  let fleet: SectionResults["fleet"] = null;
  if (!o.skip.has("fleet")) {
    const plan = { jobs: o.n, jobMs: 50, concurrency: FLEET_CONCURRENCY, levels: [1, 2, 4, 8], chunk: o.chunk };
    const levels = await measureFleet(await server.createDatabase(`bench_${tag}_fleet`), plan, log);
    const busy = await measureBusyLatency(
      await server.createDatabase(`bench_${tag}_busy`),
      { longJobMs: o.quick ? 6_000 : 30_000, woken: o.quick ? 50 : 200, notWoken: o.quick ? 5 : 20 },
      log,
    );
    fleet = { jobs: plan.jobs, jobMs: plan.jobMs, concurrency: plan.concurrency, levels, busy };
  }
  return { history, flow, fleet };
};

/** Runs the whole benchmark; `log` gets the progress lines (stderr by default). */
export const runBench = async (argv: readonly string[], log: (line: string) => void = stderr): Promise<Results> => {
  const options = parseOptions(argv);
  installDriverCounter();
  const server = await startServer();
  const systems: DrainSystem[] = [];
  const notes: string[] = [];
  try {
    log(`PostgreSQL ${server.version} (${server.embedded ? "embedded" : "DATABASE_URL"}), pg_stat_statements: ${server.statStatements ? "on" : "off"}`);
    if (!server.statStatements) notes.push("pg_stat_statements is not loaded on this server: statement counts are from the driver only.");
    // Unique names, so a bench run never collides with another one on a shared server.
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    for (const name of options.systems) {
      const database = `bench_${tag}_${name.replace(/-/g, "_")}`;
      systems.push(await FACTORIES[name](await server.createDatabase(database), database, () => loadPeers(log)));
    }
    const samples = await measureDrains(server, systems, options, log);
    const drain = drainRows(samples, options.n);

    const idleTick = await measureIdleTick(await server.createDatabase(`bench_${tag}_idle`), options.quick ? 50 : 200);
    log(`idle tick: ${idleTick.statements} statement(s), ${idleTick.ms.toFixed(2)} ms median`);

    const http = await measureHttpEnqueue(await server.createDatabase(`bench_${tag}_http`), options.quick ? 2 : 10, options.quick ? 300 : 2_000);
    log(`HTTP enqueue: ${http.reqPerSec} req/s at 32 connections (p50 ${http.p50Ms} ms), one at a time p50 ${http.singleP50Ms} ms`);
    const bulk = bulkRates(samples, options.n);
    const enqueue = {
      httpReqPerSec: http.reqPerSec,
      httpP50Ms: http.p50Ms,
      httpP99Ms: http.p99Ms,
      httpSingleP50Ms: http.singleP50Ms,
      httpSingleP99Ms: http.singleP99Ms,
      batchJobsPerSec: bulk.find((b) => b.system === "ours")?.jobsPerSec ?? 0,
      bulk,
      note: "HTTP: POST /api/jobs of createApp (src/http/api-app.ts) on @hono/node-server, autocannon in the same process; latencies at 32 connections are whole milliseconds.",
    };
    const cronPeriodMs = 1_000;
    const measured = await measureLatency(await server.createDatabase(`bench_${tag}_latency`), {
      kicked: options.quick ? 100 : 500,
      cron: options.quick ? 5 : 20,
      cronPeriodMs,
    });
    log(`enqueue → start p50: ${measured.kickOn.p50Ms} ms with the kick, ${measured.kickOff.p50Ms} ms without (cron every ${cronPeriodMs} ms)`);
    const latency = {
      ...measured,
      note:
        `Sent POST /api/jobs → handler start. Kick on: onEnqueued wakes a running tick with room (jobs.wake()), else runs a coalesced tick (src/platform/kick.ts) in the same process. ` +
        `Kick off: a cron ticks every ${cronPeriodMs} ms here (scaled down from the platform's 60 s, where the wait is ~30 s at p50).`,
    };

    const sections = await measureSections(server, tag, options, log);

    notes.push(
      "Peers' clocks stop when their last handler returns; writing their last completion is not timed (ours is: the tick returns after its final settle).",
      "graphile-worker: concurrentJobs = concurrency, completeJobBatchDelay = failJobBatchDelay = 0, pool max(10, concurrency + 2); localQueue.size = concurrency + 1 (its docs' recommended starting point, the peer the goals use) and, as a second row, 500 (its performance page), which locks up to 500 jobs ahead of the workers.",
      "pg-boss: one worker, batchSize = concurrency, burstWhenBatchFull, maintenance/cron/instance registry off.",
      "Statements per job include each peer's worker start-up and shutdown statements; bulk enqueue is timed while filling the queue for each drain.",
      "Drains of ours (the table above, history and flow control) are one tick invocation each, no fan-out: the per-invocation figure the peers are compared with. The fleet section fans out.",
    );
    const partial = {
      date: new Date().toISOString(),
      machine: machine(server),
      quick: options.quick,
      runs: options.runs,
      n: options.n,
      chunk: options.chunk,
      drain,
      ratios: ratios(drain),
      idleTick,
      enqueue,
      latency,
      ...sections,
      notes,
    };
    const results: Results = { ...partial, goals: goals(partial) };
    writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    return results;
  } finally {
    for (const system of systems) await system.close().catch((e) => log(`closing ${system.name}: ${String(e)}`));
    await server.stop();
  }
};

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === "scale") {
  mainScale(process.argv.slice(3));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  runBench(process.argv.slice(2))
    .then((results) => {
      console.log(render(results));
      stderr(`\nwrote results in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      process.exit(0);
    })
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}

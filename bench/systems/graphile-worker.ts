// graphile-worker 0.18 in its documented high-throughput configuration: the
// batching local queue (jobs fetched and locked in bulk, served to workers
// locally) and batched completions.
import type { Peers } from "../peers.js";
import type { WorkerUtils } from "../peers/index.js";
import { chunks, type DrainSystem, payloadOf } from "./system.js";

/**
 * Jobs fetched (and locked) per local-queue fetch. "recommended": concurrency + 1,
 * the starting point its docs recommend (fetches about as many jobs as run at
 * once, as our ticks and pg-boss do). "prefetch-500": the size on its
 * performance page, which locks up to 500 jobs ahead of the workers.
 */
export type LocalQueueMode = "recommended" | "prefetch-500";

const localQueueSize = (mode: LocalQueueMode, concurrency: number) =>
  mode === "recommended" ? concurrency + 1 : Math.max(500, concurrency + 1);

export const graphileWorker = async (peers: Peers, url: string, database: string, mode: LocalQueueMode = "recommended"): Promise<DrainSystem> => {
  const { Logger, makeWorkerUtils, run, runMigrations } = peers;
  const silent = new Logger(() => () => {});
  await runMigrations({ connectionString: url, logger: silent });
  const utils: WorkerUtils = await makeWorkerUtils({ connectionString: url, logger: silent });
  const count = async () =>
    utils.withPgClient(async (client) => {
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker._private_jobs");
      return rows[0]?.n ?? -1;
    });
  return {
    name: "graphile-worker",
    variant: mode === "recommended" ? "localQueue = concurrency + 1" : "localQueue = 500",
    recommended: mode === "recommended",
    database,
    async fill(n, chunk) {
      for (const specs of chunks(n, chunk, (i) => ({ identifier: "noop", payload: payloadOf(i) }))) await utils.addJobs(specs);
    },
    async drain(n, concurrency) {
      const started = performance.now();
      let done = 0;
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const runner = await run({
        connectionString: url,
        concurrency,
        noHandleSignals: true,
        logger: silent,
        taskList: {
          noop: async () => {
            if (++done >= n) finish();
          },
        },
        preset: {
          worker: {
            // Its docs: a pool of at least concurrency + 2 connections.
            maxPoolSize: Math.max(10, concurrency + 2),
            localQueue: { size: localQueueSize(mode, concurrency) },
            completeJobBatchDelay: 0,
            failJobBatchDelay: 0,
          },
        },
      });
      await finished;
      const ms = performance.now() - started;
      // Not timed: graceful stop flushes the batched completions.
      await runner.stop();
      return { ms };
    },
    remaining: count,
    async reset() {},
    async close() {
      await utils.release();
    },
  };
};

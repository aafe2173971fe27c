// pg-boss 12 with batch fetching: one worker fetching `concurrency` jobs per
// fetch, fetching again at once while fetches come back full, the batch's
// completion written in one statement.
import type { Peers } from "../peers.js";
import { chunks, type DrainSystem, payloadOf } from "./system.js";

const QUEUE = "noop";
const SCHEMA = "pgboss";

export const pgBoss = async ({ PgBoss }: Peers, url: string, database: string): Promise<DrainSystem> => {
  const boss = new PgBoss({
    connectionString: url,
    schema: SCHEMA,
    // Maintenance, cron and the instance registry are background work, not dispatching.
    supervise: false,
    schedule: false,
    registerInstance: false,
  });
  boss.on("error", (error) => console.error("pg-boss error:", error));
  await boss.start();
  await boss.createQueue(QUEUE);
  const count = async (where: string) => {
    const rows = await boss.getDb().executeSql(`SELECT count(*)::int AS n FROM ${SCHEMA}.job WHERE name = $1 AND ${where}`, [QUEUE]);
    return (rows.rows[0] as { n: number } | undefined)?.n ?? -1;
  };
  return {
    name: "pg-boss",
    variant: "batchSize = concurrency",
    recommended: true,
    database,
    async fill(n, chunk) {
      for (const items of chunks(n, chunk, (i) => ({ data: payloadOf(i) }))) await boss.insert(QUEUE, items);
    },
    async drain(n, concurrency) {
      const started = performance.now();
      let done = 0;
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      await boss.work<{ i: number }>(
        QUEUE,
        { batchSize: concurrency, localConcurrency: 1, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
        async (jobs) => {
          // The same no-op handler, once per job in the batch.
          await Promise.all(jobs.map(async () => {}));
          done += jobs.length;
          if (done >= n) finish();
        },
      );
      await finished;
      const ms = performance.now() - started;
      // Not timed: waits for the last batch's completion to be written.
      await boss.offWork(QUEUE, { wait: true });
      return { ms };
    },
    remaining: () => count("state <> 'completed'"),
    async reset() {
      await boss.deleteAllJobs(QUEUE);
    },
    close: () => boss.stop({ graceful: true, close: true }),
  };
};

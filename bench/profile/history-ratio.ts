// Drain throughput with run history on and off, alternating rounds in one process:
// `npx tsx bench/profile/history-ratio.ts [jobs] [rounds]` (DATABASE_URL or the local PostgreSQL 15).
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, silentLogger } from "../../src/index.js";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const n = Number(process.argv[2] ?? 5_000);
const rounds = Number(process.argv[3] ?? 3);
const noop = defineJob({ name: "noop", schema: z.object({ i: z.number() }), handler: (p) => ({ i: p.i }) });
const pool = new pg.Pool({ connectionString: url, max: 4 });
const make = (history: boolean) =>
  createJobs({ db: pool, jobs: [noop], logger: silentLogger, settings: { tablePrefix: history ? "hon_" : "hoff_", concurrency: 32, historyRetentionMs: history ? 86_400_000 : false } });
const on = make(true);
const off = make(false);
await on.migrate();
await off.migrate();
const drain = async (jobs: typeof on) => {
  for (let i = 0; i < n; i += 1_000) await jobs.enqueueMany(Array.from({ length: Math.min(1_000, n - i) }, (_, k) => ({ job: "noop" as const, payload: { i: i + k } })));
  const started = performance.now();
  let done = 0;
  while (done < n) done += (await jobs.tick({ budgetMs: 600_000, concurrency: 32, batchSize: 32 })).succeeded;
  return (n / (performance.now() - started)) * 1_000;
};
const ratios: number[] = [];
for (let r = 0; r < rounds; r++) {
  const a = await drain(off);
  const b = await drain(on);
  ratios.push(b / a);
  console.log(`round ${r + 1}: off ${a.toFixed(0)} jobs/s, on ${b.toFixed(0)} jobs/s, on/off ${(b / a).toFixed(2)}`);
}
ratios.sort((x, y) => x - y);
console.log(`median on/off ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}`);
await pool.end();

// Profiling aid (not part of `npm run bench`): one claim of 32 as a tick sends it, repeated in
// transactions that roll back, so every repetition meets the same queue (no dead index entries, no
// drift): an empty transaction, a claim of unkeyed jobs, a claim of keyed jobs (a concurrency limit
// that never binds, 100 keys) through the migrated flow_admit, and the same through each SQL file
// given (run after the migrations, {{prefix}} as in them), e.g. a rewritten or stripped-down
// flow_admit. Variants alternate, 1.5 s each per round; it prints each one's µs per claim, minimum
// and median over the rounds, beside the empty transaction's (the client's and the round trips' share).
//   npx tsx bench/profile/admit-rollback.ts [rounds] [variant.sql ...]
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import pg from "pg";
import { flowSpec } from "../../src/flow/spec.js";
import { buildStep } from "../../src/store/tick/step.js";
import { concurrencyLimited } from "../measure/flow-jobs.js";
import { startServer } from "../server.js";
import { type NoopJob, noop, ourJobs } from "../systems/ours.js";
import { chunks, payloadOf } from "../systems/system.js";
import { median } from "../stats.js";

const rounds = Number(process.argv[2] ?? 6);
const files = process.argv.slice(3);
const server = await startServer();
const clients: pg.Client[] = [];
try {
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  };
  const filled = async (database: string, job: NoopJob, sql?: string) => {
    const url = await server.createDatabase(database);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const { jobs } = ourJobs(pool, 32, { job });
    await jobs.migrate();
    if (sql) await pool.query(readFileSync(sql, "utf8").replaceAll("{{prefix}}", jobs.tables.prefix));
    for (const items of chunks(20_000, 1_000, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
    await pool.query("VACUUM (ANALYZE)");
    const spec = flowSpec(jobs.registry);
    const flow = spec.enabled ? { limitsJson: spec.limitsJson, split: true, cursor: `c:noop:k5`, maxKeys: 50 } : undefined;
    const statement = buildStep(jobs.tables, { claim: { limit: 32, owner: crypto.randomUUID(), leaseMs: 60_000, flow } })!;
    await pool.end();
    return { url, client: await connect(url), statement };
  };
  const plain = await filled("bench_admit_rb_plain", noop);
  const variants = [
    { name: "empty transaction", ...plain, client: await connect(plain.url), empty: true },
    { name: "unkeyed claim", ...plain, empty: false },
    { name: "keyed claim (migrated flow_admit)", ...(await filled("bench_admit_rb_keyed", concurrencyLimited)), empty: false },
    ...(await Promise.all(files.map(async (f, i) => ({ name: `keyed claim + ${basename(f)}`, ...(await filled(`bench_admit_rb_v${i}`, concurrencyLimited, f)), empty: false })))),
  ];
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const v of variants) {
      let n = 0;
      const started = performance.now();
      while (performance.now() - started < 1_500) {
        await v.client.query("BEGIN");
        if (!v.empty) {
          const { rows } = await v.client.query<{ claimed: unknown[] }>({ name: "claim", text: v.statement.text, values: v.statement.values });
          if (rows[0]!.claimed.length !== 32) throw new Error(`${v.name}: claimed ${rows[0]!.claimed.length} of 32`);
        }
        await v.client.query("ROLLBACK");
        n++;
      }
      times.get(v.name)!.push(((performance.now() - started) * 1_000) / n);
    }
  }
  for (const v of variants) {
    const t = times.get(v.name)!;
    console.log(`${v.name.padEnd(48)} min ${Math.min(...t).toFixed(0).padStart(5)} µs, median ${median(t).toFixed(0).padStart(5)} µs per transaction`);
  }
} finally {
  for (const c of clients) await c.end();
  await server.stop();
}

// Local experiment (not part of `npm run bench`, changes nothing in src/):
// the bare step loop under variations of how the statement is sent and which
// indexes the queue carries, interleaved, median of runs.
//   npx tsx bench/profile/step-variants.ts [n] [concurrency] [runs]
import { createHash } from "node:crypto";
import pg from "pg";
import type { ClaimedRow } from "../../src/store/tick/claim.js";
import { buildStep, type StepResult } from "../../src/store/tick/step.js";
import { startServer } from "../server.js";
import { median } from "../stats.js";
import { ourJobs } from "../systems/ours.js";

const n = Number(process.argv[2] ?? 10_000);
const concurrency = Number(process.argv[3] ?? 32);
const runs = Number(process.argv[4] ?? 3);

interface Variant {
  readonly name: string;
  readonly prepared: boolean;
  /** DDL applied to this variant's database after the migrations. */
  readonly ddl: string[];
}

const variants: Variant[] = [
  { name: "as is", prepared: false, ddl: [] },
  { name: "named prepared statement", prepared: true, ddl: [] },
  {
    name: "prepared + partial idempotency index",
    prepared: true,
    ddl: [
      "DROP INDEX jobs_queue_idempotency_idx",
      "CREATE UNIQUE INDEX jobs_queue_idempotency_idx ON jobs_queue (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL",
    ],
  },
  {
    name: "prepared + partial idempotency + no name index",
    prepared: true,
    ddl: [
      "DROP INDEX jobs_queue_idempotency_idx",
      "CREATE UNIQUE INDEX jobs_queue_idempotency_idx ON jobs_queue (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL",
      "DROP INDEX jobs_queue_name_idx",
    ],
  },
];

const server = await startServer();
try {
  const setups = [];
  for (const [i, v] of variants.entries()) {
    const database = `bench_variant_${i}`;
    const url = await server.createDatabase(database);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pool.on("error", () => {}); // idle clients dropped when the databases are dropped
    const { jobs } = ourJobs(pool);
    await jobs.migrate();
    for (const ddl of v.ddl) await pool.query(ddl);
    setups.push({ v, database, pool, jobs });
  }
  const rates = new Map<string, number[]>();
  for (let run = 0; run < runs; run++) {
    for (const { v, database, pool, jobs } of setups) {
      // A plain insert: the partial-index variants would need the ON CONFLICT clause changed too.
      await pool.query(
        `INSERT INTO ${jobs.tables.queue} (id, job_name, payload) SELECT gen_random_uuid(), 'noop', jsonb_build_object('i', g) FROM generate_series(1, $1::int) g`,
        [n],
      );
      await server.admin(database, "VACUUM (ANALYZE)");
      let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
      const started = performance.now();
      for (;;) {
        const owner = crypto.randomUUID();
        const statement = buildStep(jobs.tables, {
          complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0 })),
          claim: { limit: concurrency, owner, leaseMs: 60_000 },
        })!;
        const name = v.prepared ? `s_${createHash("sha1").update(statement.text).digest("hex").slice(0, 16)}` : undefined;
        const { rows } = await pool.query<StepResult>({ text: statement.text, values: statement.values, name });
        const claimed = rows[0]!.claimed;
        if (claimed.length === 0) break;
        held = { rows: claimed, owner };
      }
      const rate = n / ((performance.now() - started) / 1000);
      rates.set(v.name, [...(rates.get(v.name) ?? []), rate]);
    }
  }
  for (const v of variants) {
    const rs = rates.get(v.name)!;
    console.log(`${v.name.padEnd(50)} ${Math.round(median(rs)).toString().padStart(7)} jobs/s  (runs: ${rs.map(Math.round).join(", ")})`);
  }
  for (const { pool } of setups) await pool.end();
} catch (error) {
  console.error(error);
} finally {
  await server.stop();
}

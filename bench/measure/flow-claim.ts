// Claim latency with a deep keyed backlog: one claim statement (10 jobs, the admission
// walking the keys round-robin as a tick's claim does) with 10,000 and with 1,000,000 queued
// jobs of a concurrency-limited job, keys spread over FLOW_KEYS values. The backlog is
// written with generate_series in the shape the enqueue path stores (checked against a real
// enqueue first); each claimed batch is completed again, untimed.
import pg from "pg";
import { fromPg } from "../../src/index.js";
import { flowSpec } from "../../src/flow/spec.js";
import { runStep } from "../../src/store/tick/step.js";
import type { BenchServer } from "../server.js";
import { median, percentile, round } from "../stats.js";
import { ourJobs } from "../systems/ours.js";
import { concurrencyLimited, FLOW_KEYS } from "./flow-jobs.js";

export interface KeyedClaimLevel {
  readonly queued: number;
  readonly fillS: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** p50 over the first level's p50. */
  readonly vsFirst: number;
  readonly samples: number;
}

export interface KeyedClaim {
  readonly limit: number;
  readonly keys: number;
  readonly levels: KeyedClaimLevel[];
}

const CLAIM = 10;

// A UUIDv7 in SQL (PostgreSQL 15 has no uuidv7()): 48-bit ms, version 7, variant, then g for uniqueness.
const v7 = (ms: string, g: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || lpad(to_hex((${g}) % 4096), 3, '0') || to_hex(8 + (${g}) % 4) || lpad(to_hex(${g}), 15, '0'))::uuid`;

export const measureKeyedClaim = async (
  server: BenchServer,
  tag: string,
  plan: { readonly levels: readonly number[]; readonly samples: number },
  progress: (line: string) => void,
): Promise<KeyedClaim> => {
  const database = `bench_${tag}_flow_claim`;
  const pool = new pg.Pool({ connectionString: await server.createDatabase(database), max: 1 });
  pool.on("error", () => {});
  try {
    const { jobs } = ourJobs(pool, CLAIM, { job: concurrencyLimited });
    await jobs.migrate();
    const t = jobs.tables;
    const db = fromPg(pool);
    const limitsJson = flowSpec(jobs.registry).limitsJson;
    // What the enqueue path stores for a keyed job, so the generated backlog is the same.
    const probeI = 12_345;
    await jobs.enqueueMany([{ job: "noop", payload: { i: probeI } }]);
    const { rows: stored } = await pool.query<{ flow_key: string; concurrency_key: string; rate_keys: unknown }>(
      `SELECT flow_key, concurrency_key, rate_keys FROM ${t.queue}`,
    );
    const want = { flow_key: `c:noop:k${probeI % FLOW_KEYS}`, concurrency_key: `k${probeI % FLOW_KEYS}`, rate_keys: null };
    if (JSON.stringify(stored) !== JSON.stringify([want])) throw new Error(`keyed claim: enqueue stored ${JSON.stringify(stored)}, the fill writes ${JSON.stringify(want)}`);
    await pool.query(`DELETE FROM ${t.queue}`);

    const base = Date.now() - 3_600_000;
    let filled = 0;
    let cursor = "";
    const levels: KeyedClaimLevel[] = [];
    for (const queued of plan.levels) {
      const started = performance.now();
      const { rows: have } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t.queue}`);
      const from = filled;
      const to = filled + Math.max(0, queued - have[0]!.n);
      await pool.query(
        `INSERT INTO ${t.queue} (id, job_name, payload, run_at, created_at, flow_key, concurrency_key)
         SELECT ${v7(`${base} + g / 1000`, "g")}, 'noop', jsonb_build_object('i', g), to_timestamp((${base} + g / 1000) / 1000.0),
                to_timestamp((${base} + g / 1000) / 1000.0), 'c:noop:k' || (g % ${FLOW_KEYS}), 'k' || (g % ${FLOW_KEYS})
         FROM generate_series($1::int + 1, $2::int) g`,
        [from, to],
      );
      filled = to;
      await pool.query(`VACUUM (ANALYZE) ${t.queue}`);
      const fillS = round((performance.now() - started) / 1000, 1);
      const times: number[] = [];
      for (let i = 0; i < plan.samples + 5; i++) {
        const owner = crypto.randomUUID();
        const at = performance.now();
        const result = await runStep(db, t, { claim: { limit: CLAIM, owner, leaseMs: 60_000, flow: { limitsJson, split: true, cursor, maxKeys: 2 * CLAIM } } });
        const ms = performance.now() - at;
        if (i >= 5) times.push(ms); // the first ones warm the connection and the plan
        if (result.claimed.length !== CLAIM) throw new Error(`keyed claim: claimed ${result.claimed.length} of ${CLAIM} with ${queued} queued`);
        cursor = result.flowCursor ?? cursor;
        await runStep(db, t, { complete: result.claimed.map((r) => ({ id: r.id, owner, durationMs: 0 })) });
      }
      const p50 = median(times);
      const first = levels[0]?.p50Ms ?? p50;
      levels.push({ queued, fillS, p50Ms: round(p50, 3), p95Ms: round(percentile(times, 95), 3), vsFirst: round(p50 / first, 2), samples: times.length });
      progress(`flow claim  ${queued.toLocaleString("en-US").padStart(9)} keyed jobs queued: claim of ${CLAIM} p50 ${round(p50, 2)} ms (filled in ${fillS} s)`);
    }
    return { limit: CLAIM, keys: FLOW_KEYS, levels };
  } finally {
    await pool.end();
  }
};

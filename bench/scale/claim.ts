// Claim latency after a drain: every claim and settle rewrites its queue row (never a HOT
// update), so a drain leaves two dead row versions per job behind, and their index entries slow
// the next claims until a vacuum removes them. Measured with the queue's autovacuum settings
// (migration 008): right after the drain, once autovacuum has visited (if it does within the
// wait), and right after a manual VACUUM.
import pg from "pg";
import { fromPg, type Db } from "../../src/index.js";
import type { Tables } from "../../src/store/shared/tables.js";
import type { ClaimedRow } from "../../src/store/tick/claim.js";
import { runStep } from "../../src/store/tick/step.js";
import { median, percentile, round } from "../stats.js";
import { ourJobs } from "../systems/ours.js";

export interface ClaimPoint {
  readonly when: string;
  /** Seconds since the drain ended. */
  readonly atS: number;
  readonly deadTuples: number;
  readonly claimP50Ms: number;
  readonly claimP95Ms: number;
}

export interface ClaimAfterDrain {
  readonly drained: number;
  readonly drainJobsPerSec: number;
  /** Row updates during the drain, and how many were HOT (none can be: the indexes cover status). */
  readonly updates: number;
  readonly hotUpdates: number;
  readonly autovacuumRan: boolean;
  /** The server's autovacuum and autovacuum_naptime settings (a server with autovacuum off never visits). */
  readonly autovacuum: string;
  /** The queue's storage parameters the drain ran with. */
  readonly reloptions: string[];
  readonly points: ClaimPoint[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface TableStats {
  dead: number;
  upd: number;
  hot: number;
  autovacuums: number;
}

export const measureClaimAfterDrain = async (
  url: string,
  options: { drain: number; samples: number; waitS: number },
  log: (line: string) => void,
): Promise<ClaimAfterDrain> => {
  // One connection, so the statistics this session counts are flushed by its own next statement.
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on("error", () => {});
  try {
    const { jobs } = ourJobs(pool);
    await jobs.migrate();
    const db = fromPg(pool);
    const t = jobs.tables;
    // Enough jobs past the drain for every claim sample.
    const extra = options.samples * 10 * 3 + 1_000;
    await pool.query(
      `INSERT INTO ${t.queue} (id, job_name, payload, run_at)
       SELECT (lpad(to_hex(1700000000000 + g), 12, '0') || '7000' || '8' || lpad(to_hex(g), 15, '0'))::uuid, 'noop',
              jsonb_build_object('i', g), now() - interval '1 minute' + CASE WHEN g > $1 THEN interval '1 second' ELSE interval '0' END
       FROM generate_series(1, $1::int + $2::int) g`,
      [options.drain, extra],
    );
    await pool.query(`VACUUM (ANALYZE) ${t.queue}`);
    const stats = async (): Promise<TableStats> => {
      await sleep(1_100);
      await pool.query("SELECT 1"); // flushes this session's counts (at most once a second)
      const { rows } = await pool.query<{ dead: string; upd: string; hot: string; av: string }>(
        `SELECT n_dead_tup AS dead, n_tup_upd AS upd, n_tup_hot_upd AS hot, autovacuum_count AS av FROM pg_stat_user_tables WHERE relid = $1::regclass`,
        [t.queue],
      );
      const r = rows[0]!;
      return { dead: Number(r.dead), upd: Number(r.upd), hot: Number(r.hot), autovacuums: Number(r.av) };
    };
    const before = await stats();

    const started = performance.now();
    let done = 0;
    let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
    while (done < options.drain) {
      const owner = crypto.randomUUID();
      const result = await runStep(db, t, {
        complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0 })),
        claim: { limit: Math.min(10, options.drain - done - held.rows.length), owner, leaseMs: 60_000 },
      });
      done += result.completed.length;
      held = { rows: result.claimed, owner };
      if (result.claimed.length === 0 && result.completed.length === 0) throw new Error(`drain: queue empty after ${done}`);
    }
    const drainMs = performance.now() - started;
    const ended = performance.now();
    log(`  drained ${done.toLocaleString("en-US")} jobs in ${(drainMs / 1000).toFixed(1)} s`);

    const { rows: settings } = await pool.query<{ on: string; nap: string }>(
      `SELECT current_setting('autovacuum') AS on, current_setting('autovacuum_naptime') AS nap`,
    );
    const autovacuum = `autovacuum ${settings[0]!.on}, naptime ${settings[0]!.nap}`;
    const points: ClaimPoint[] = [];
    const point = async (when: string) => {
      const s = await stats();
      const times = await claimSamples(db, t, options.samples);
      const p = { when, atS: round((performance.now() - ended) / 1000, 0), deadTuples: s.dead, claimP50Ms: round(median(times), 3), claimP95Ms: round(percentile(times, 95), 3) };
      log(`  ${when}: ${p.deadTuples.toLocaleString("en-US")} dead tuples, claim of 10 p50 ${p.claimP50Ms} ms`);
      points.push(p);
      return s;
    };
    const afterDrain = await point("right after the drain");
    let autovacuumRan = false;
    const deadline = performance.now() + (settings[0]!.on === "on" ? options.waitS * 1000 : 0);
    if (settings[0]!.on !== "on") log("  this server runs without autovacuum: not waiting for it");
    while (performance.now() < deadline) {
      const s = await stats();
      if (s.autovacuums > before.autovacuums) {
        autovacuumRan = true;
        break;
      }
    }
    if (autovacuumRan) await point("after autovacuum visited");
    else if (options.waitS > 0 && settings[0]!.on === "on") log(`  autovacuum did not visit the queue within ${options.waitS} s`);
    await stats(); // the samples' counts reach the statistics before VACUUM resets them
    await pool.query(`VACUUM ${t.queue}`);
    await point("right after VACUUM");
    const { rows } = await pool.query<{ o: string[] | null }>(`SELECT reloptions AS o FROM pg_class WHERE oid = $1::regclass`, [t.queue]);
    return {
      drained: done,
      drainJobsPerSec: Math.round(done / (drainMs / 1000)),
      updates: afterDrain.upd - before.upd,
      hotUpdates: afterDrain.hot - before.hot,
      autovacuumRan,
      autovacuum,
      reloptions: rows[0]?.o ?? [],
      points,
    };
  } finally {
    await pool.end();
  }
};

/** Times one claim statement of 10 rows, `n` times; each claimed batch is then completed (untimed). */
const claimSamples = async (db: Db, t: Tables, n: number): Promise<number[]> => {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const owner = crypto.randomUUID();
    const started = performance.now();
    const { claimed } = await runStep(db, t, { claim: { limit: 10, owner, leaseMs: 60_000 } });
    times.push(performance.now() - started);
    if (claimed.length < 10) throw new Error(`claim sample: only ${claimed.length} due jobs left`);
    await runStep(db, t, { complete: claimed.map((r) => ({ id: r.id, owner, durationMs: 0 })) });
  }
  return times;
};

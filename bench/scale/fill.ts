// Set-based fills for the scale section: each level tops a table up to its size with one
// INSERT ... SELECT generate_series, rows shaped like a real backlog (time-ordered UUIDv7 ids,
// a few jobs of very different sizes, most jobs due, a few running).
import type pg from "pg";
import type { Tables } from "../../src/store/shared/tables.js";

/** Jobs of the fills: most rows are "email", then "report", "sync"; "audit" has 10 queued jobs and 10 dead letters. */
export const FILL_JOBS = ["email", "report", "sync", "audit"] as const;
export const RARE_JOB = "audit";
/** Running rows: few (a tick's concurrency), the same at every level. */
export const RUNNING = 100;

// A UUIDv7 in SQL (PostgreSQL 15 has no uuidv7()): 48-bit ms, version 7, variant, then `seq` for uniqueness.
const v7 = (ms: string, seq: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || lpad(to_hex((${seq}) % 4096), 3, '0') || to_hex(8 + (${seq}) % 4) || lpad(to_hex(${seq}), 15, '0'))::uuid`;

const jobOf = (g: string) => `CASE WHEN ${g} <= 10 THEN '${RARE_JOB}' WHEN ${g} % 10 < 5 THEN 'email' WHEN ${g} % 10 < 8 THEN 'report' ELSE 'sync' END`;

/** Rows g in (from, to] are 1 ms apart, starting `base` ms after the epoch. */
export const fillQueue = async (pool: pg.Pool, t: Tables, base: number, from: number, to: number): Promise<void> => {
  if (from === 0) {
    await pool.query(
      `INSERT INTO ${t.queue} (id, job_name, payload, status, attempt, lease_owner, lease_expires_at, run_at, created_at)
       SELECT ${v7(`${base} - 1000 + g`, `g + 2000000000`)}, 'email', jsonb_build_object('to', 'running' || g || '@example.com'),
              'running', 1, gen_random_uuid(), now() + interval '1 hour', now(), now()
       FROM generate_series(1, ${RUNNING}) g`,
    );
  }
  if (to <= from) return;
  await pool.query(
    `INSERT INTO ${t.queue} (id, job_name, payload, run_at, created_at)
     SELECT ${v7(`${base} + g`, "g")}, ${jobOf("g")}, jsonb_build_object('to', 'user' || g || '@example.com'),
            to_timestamp((${base} + g) / 1000.0) + CASE WHEN g % 7 = 0 THEN interval '30 days' ELSE interval '0' END,
            to_timestamp((${base} + g) / 1000.0)
     FROM generate_series(${from + 1}, ${to}) g`,
  );
};

export const fillDeadLetters = async (pool: pg.Pool, t: Tables, base: number, from: number, to: number): Promise<void> => {
  if (to <= from) return;
  await pool.query(
    `INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, last_error, created_at, dead_at)
     SELECT ${v7(`${base} + g`, "g + 1000000000")}, ${jobOf("g")}, jsonb_build_object('to', 'user' || g || '@example.com'), 5, 5,
            CASE WHEN g <= 10 THEN 'invalid_payload' WHEN g % 2 = 0 THEN 'exhausted' ELSE 'permanent' END, 'Error: boom',
            to_timestamp((${base} + g) / 1000.0) - interval '1 minute', to_timestamp((${base} + g) / 1000.0)
     FROM generate_series(${from + 1}, ${to}) g`,
  );
};

export const RUN_OUTCOMES = ["succeeded", "succeeded", "succeeded", "retried", "dead_lettered"] as const;

/** Run history rows (migration 007's `runs`), in finishing order, inserted in chunks so progress shows. */
export const fillRuns = async (pool: pg.Pool, prefix: string, base: number, from: number, to: number, log: (line: string) => void): Promise<void> => {
  const chunk = 1_000_000;
  for (let start = from; start < to; start += chunk) {
    const end = Math.min(to, start + chunk);
    await pool.query(
      `INSERT INTO ${prefix}runs (job_id, job_name, attempt, outcome, started_at, finished_at, duration_ms, error, correlation_id)
       SELECT ${v7(`${base} + g`, "g")}, ${jobOf("g")}, 1, (ARRAY[${RUN_OUTCOMES.map((o) => `'${o}'`).join(", ")}])[1 + g % ${RUN_OUTCOMES.length}],
              to_timestamp((${base} + g) / 1000.0), to_timestamp((${base} + g + 3) / 1000.0), 3,
              CASE WHEN g % ${RUN_OUTCOMES.length} >= 3 THEN 'Error: boom' END, CASE WHEN g % 1000 = 7 THEN 'order-' || g END
       FROM generate_series(${start + 1}, ${end}) g`,
    );
    if (to - from > chunk) log(`  runs: ${end.toLocaleString("en-US")} rows`);
  }
};

// Profiling aid (not part of `npm run bench`): the server CPU a drain's statements cost, per job,
// read from /proc for the backend that ran them (Linux, embedded or local server only). The claim
// and the settle go out on connections of their own, one after the other, as a tick sends them
// (claims of `concurrency`, settles of four times that), so each backend's CPU is one statement
// kind's and no statement waits on another. pg_stat_statements' execution times include waiting
// for a core on a machine the client shares; this is the CPU alone.
// A fourth argument picks the variants, comma-separated: `none`, `nohistory`, `conc`, `rate`, each
// optionally `:file.sql`, SQL run after the migrations ({{prefix}} as in them), e.g. a rewritten
// flow_admit measured against the migrated one in the same run without a migration:
//   npx tsx bench/profile/statement-cpu.ts [n] [concurrency] [rounds] [conc,conc:/tmp/admit.sql]
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import pg from "pg";
import { flowSpec } from "../../src/flow/spec.js";
import type { DispatchPosition } from "../../src/store/tick/claim.js";
import { buildStep, type StepInput } from "../../src/store/tick/step.js";
import { concurrencyLimited, rateLimited } from "../measure/flow-jobs.js";
import { startServer } from "../server.js";
import { type NoopJob, noop, ourJobs } from "../systems/ours.js";
import { chunks, payloadOf } from "../systems/system.js";

const n = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 32);
const rounds = Number(process.argv[4] ?? 2);

/** User + system CPU of a process so far, in µs (clock ticks of 10 ms). */
const cpuOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10_000;
};

const KINDS: Record<string, { name: string; job: NoopJob; history: boolean }> = {
  none: { name: "no limits", job: noop, history: true },
  nohistory: { name: "history off", job: noop, history: false },
  conc: { name: "concurrency", job: concurrencyLimited, history: true },
  rate: { name: "rate", job: rateLimited, history: true },
};
const variants = (process.argv[5] ?? "none,nohistory,conc,rate").split(",").map((spec) => {
  const [kind = "", sql] = spec.split(":");
  const base = KINDS[kind];
  if (!base) throw new Error(`unknown variant ${kind} (one of ${Object.keys(KINDS).join(", ")})`);
  return { ...base, name: sql ? `${base.name} + ${basename(sql)}` : base.name, sql };
});

const server = await startServer();
try {
  const setups = [];
  for (const [i, v] of variants.entries()) {
    const url = await server.createDatabase(`bench_statement_cpu_${i}`);
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    pool.on("error", () => {}); // idle clients dropped when the databases are dropped
    const { jobs } = ourJobs(pool, concurrency, { job: v.job });
    await jobs.migrate();
    if (v.sql) await pool.query(readFileSync(v.sql, "utf8").replaceAll("{{prefix}}", jobs.tables.prefix));
    const claimer = await pool.connect();
    const settler = await pool.connect();
    const pid = async (c: pg.PoolClient) => (await c.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]!.p;
    setups.push({ ...v, pool, jobs, claimer, settler, claimPid: await pid(claimer), settlePid: await pid(settler), spec: flowSpec(jobs.registry) });
  }
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 === 0 ? setups : [...setups].reverse()) {
      for (const items of chunks(n, 1_000, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await s.jobs.enqueueMany(items);
      await s.pool.query("VACUUM (ANALYZE)");
      const flow = { limitsJson: s.spec.limitsJson, split: s.spec.enabled, cursor: "", maxKeys: Math.min(50, Math.max(8, concurrency)), keyed: s.spec.enabled };
      let after: DispatchPosition | undefined;
      let owed: Array<{ id: string; owner: string }> = [];
      let claimUs = 0;
      let settleUs = 0;
      let settled = 0;
      const send = async (client: pg.PoolClient, pid: number, name: string, input: StepInput) => {
        const statement = buildStep(s.jobs.tables, input)!;
        const before = cpuOf(pid);
        const { rows } = await client.query({ name, text: statement.text, values: statement.values });
        return { row: rows[0] as Record<string, unknown>, us: cpuOf(pid) - before };
      };
      for (;;) {
        const owner = crypto.randomUUID();
        const claim = await send(s.claimer, s.claimPid, after ? "claim_after" : "claim", {
          claim: { limit: concurrency, owner, leaseMs: 60_000, flow, after },
          meter: { later: true },
          history: s.history,
        });
        claimUs += claim.us;
        after = (claim.row.dispatchedTo as DispatchPosition | null) ?? after;
        flow.cursor = (claim.row.flowCursor as string | null) ?? flow.cursor;
        const claimed = claim.row.claimed as Array<{ id: string }>;
        for (const c of claimed) owed.push({ id: c.id, owner });
        if (owed.length >= 4 * concurrency || (claimed.length === 0 && owed.length > 0)) {
          const complete = owed.map((o) => ({ ...o, durationMs: 0, history: s.history ? {} : undefined }));
          const done = await send(s.settler, s.settlePid, "settle", { complete, meter: { later: true }, history: s.history });
          settleUs += done.us;
          settled += (done.row.completed as string[]).length;
          owed = [];
        }
        if (claimed.length === 0) break;
      }
      if (settled !== n) throw new Error(`${s.name}: settled ${settled} of ${n}`);
      const per = (us: number) => (us / n).toFixed(1).padStart(5);
      console.log(`round ${round + 1} ${s.name.padEnd(Math.max(...setups.map((x) => x.name.length)))} server CPU per job: claim ${per(claimUs)} µs, settle ${per(settleUs)} µs, both ${per(claimUs + settleUs)} µs`);
    }
  }
  for (const s of setups) {
    s.claimer.release();
    s.settler.release();
    await s.pool.end();
  }
} finally {
  await server.stop();
}

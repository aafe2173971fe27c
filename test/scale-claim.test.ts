// The claim at the queue sizes a backlog passes through: the statement joins the jobs it picked
// (along the dispatch index, and through flow_admit) back to the queue by id. Checked on the plan:
// with 30,000 queued jobs a claim of 1 to 500 may not read the whole queue for that join, in the plan
// for its values or in the generic plan a prepared step keeps.
import { describe, expect, it } from "vitest";
import { buildStep } from "../src/store/tick/step.js";
import { harness } from "./support/harness.js";

const h = await harness("scale_claim");
const t = h.make([]).tables;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

const scansOfQueue = (node: PlanNode, out: Array<{ type: string; read: number }> = [], queue = t.queue) => {
  if (node["Relation Name"] === queue && node["Node Type"] !== "ModifyTable") {
    out.push({ type: node["Node Type"], read: (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"] });
  }
  for (const child of node.Plans ?? []) scansOfQueue(child, out, queue);
  return out;
};

describe("the claim at 30,000 queued jobs", () => {
  it("reads the rows it claims along indexes, not the whole queue", async () => {
    await h.db.query(
      `INSERT INTO ${t.queue} (id, job_name, payload, run_at) SELECT gen_random_uuid(), 'noop', jsonb_build_object('i', g), now() - interval '1 minute'
       FROM generate_series(1, 30000) g`,
    );
    await h.db.query(`ANALYZE ${t.queue}`);
    const client = await h.main.connect();
    try {
      for (const limit of [1, 10, 100, 500]) {
        const step = buildStep(t, { claim: { limit, owner: crypto.randomUUID(), leaseMs: 60_000 } })!;
        // The plan for these values, and the generic plan the server keeps for a prepared step.
        for (const mode of ["force_custom_plan", "force_generic_plan"]) {
          await client.query("BEGIN");
          await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
          await client.query(`PREPARE claim_step AS ${step.text}`);
          const args = step.values.map((v) => (v === null ? "NULL" : `'${String(typeof v === "object" ? JSON.stringify(v) : v).replaceAll("'", "''")}'`));
          const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_step(${args.join(", ")})`);
          await client.query("ROLLBACK");
          await client.query("DEALLOCATE claim_step");
          const scans = scansOfQueue(rows[0]!["QUERY PLAN"][0]!.Plan);
          expect(scans.filter((s) => s.type === "Seq Scan"), `claim of ${limit}, ${mode}`).toEqual([]);
          expect(Math.max(...scans.map((s) => s.read)), `claim of ${limit}, ${mode}`).toBeLessThanOrEqual(limit * 2);
        }
      }
    } finally {
      client.release();
    }
  });
});

describe("an idle claim beside 30,000 delayed jobs", () => {
  it("reads a few pages, not the dispatch index: whether anything unkeyed is due is one index probe", async () => {
    const own = h.make([], { tablePrefix: "idle_" });
    await own.migrate();
    const q = own.tables;
    // Statistics from when they were all due (a backlog whose last due jobs just ran): the planner expects
    // the dispatch index to find due rows at once, and would read all of it.
    await h.db.query(
      `INSERT INTO ${q.queue} (id, job_name, payload, run_at, priority) SELECT gen_random_uuid(), 'noop', jsonb_build_object('i', g), now() - interval '1 minute', g % 3
       FROM generate_series(1, 30000) g`,
    );
    await h.db.query(`ALTER TABLE ${q.queue} SET (autovacuum_enabled = false)`);
    await h.db.query(`VACUUM ANALYZE ${q.queue}`);
    await h.db.query(`UPDATE ${q.queue} SET run_at = now() + interval '1 hour'`);
    await h.db.query(`VACUUM ${q.queue}`);
    const flows = [undefined, { limitsJson: "{}", split: true, maxKeys: 32, cursor: "" }];
    for (const flow of flows) {
      const step = buildStep(q, { claim: { limit: 10, owner: crypto.randomUUID(), leaseMs: 60_000, flow } })!;
      const client = await h.main.connect();
      try {
        // The generic plan a tick's prepared step runs on: it cannot know that no row is due.
        for (const mode of ["force_custom_plan", "force_generic_plan"]) {
          await client.query("BEGIN");
          await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
          await client.query(`PREPARE idle_step AS ${step.text}`);
          const args = step.values.map((v) => (v === null ? "NULL" : `'${String(typeof v === "object" ? JSON.stringify(v) : v).replaceAll("'", "''")}'`));
          const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }> }>(
            `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE idle_step(${args.join(", ")})`);
          await client.query("ROLLBACK");
          await client.query("DEALLOCATE idle_step");
          const plan = rows[0]!["QUERY PLAN"][0]!.Plan;
          expect(plan["Shared Hit Blocks"] + plan["Shared Read Blocks"], `${flow ? "split" : "unkeyed"}, ${mode}`).toBeLessThan(40);
        }
      } finally {
        client.release();
      }
    }
  });
});

describe("the settle beside 20,000 running jobs", () => {
  it("finds the runs it settles by id, not by reading every running job", async () => {
    const s = h.make([], { tablePrefix: "settle_" });
    await s.migrate();
    const q = s.tables.queue;
    await h.db.query(`ALTER TABLE ${q} SET (autovacuum_enabled = false)`);
    await h.db.query(
      `INSERT INTO ${q} (id, job_name, payload) SELECT gen_random_uuid(), 'noop', jsonb_build_object('i', g) FROM generate_series(1, 20128) g`,
    );
    // Statistics from before the backlog started: the planner expects no job to be running.
    await h.db.query(`ANALYZE ${q}`);
    await h.db.query(`UPDATE ${q} SET status = 'running', attempt = 1, lease_owner = gen_random_uuid(), lease_expires_at = now() + interval '1 hour'`);
    const owner = crypto.randomUUID();
    const { rows: mine } = await h.db.query<{ id: string }>(
      `UPDATE ${q} SET lease_owner = $1 WHERE id IN (SELECT id FROM ${q} ORDER BY id LIMIT 128) RETURNING id::text`, [owner]);
    const ids = mine.map((r) => r.id);
    const at = (i: number) => ids.slice(i * 32, (i + 1) * 32);
    const step = buildStep(s.tables, {
      complete: at(0).map((id) => ({ id, owner, durationMs: 1 })),
      retry: at(1).map((id) => ({ id, owner, durationMs: 1, delayMs: 1_000, error: "e" })),
      deadLetter: at(2).map((id) => ({ id, owner, durationMs: 1, error: "e", reason: "exhausted" as const })),
      requeue: at(3).map((id) => ({ id, owner, durationMs: 1 })),
      history: true,
    })!;
    const client = await h.main.connect();
    try {
      for (const mode of ["force_custom_plan", "force_generic_plan"]) {
        await client.query("BEGIN");
        await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await client.query(`PREPARE settle_step AS ${step.text}`);
        const args = step.values.map((v) => (v === null ? "NULL" : `'${String(typeof v === "object" ? JSON.stringify(v) : v).replaceAll("'", "''")}'`));
        const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE settle_step(${args.join(", ")})`);
        await client.query("ROLLBACK");
        await client.query("DEALLOCATE settle_step");

        const scans = scansOfQueue(rows[0]!["QUERY PLAN"][0]!.Plan, [], q);
        expect(scans.length, mode).toBeGreaterThan(0);
        // Each outcome reads its 32 runs (requeue's two halves read the same 32 each).
        expect(Math.max(...scans.map((x) => x.read)), `${mode}: ${JSON.stringify(scans)}`).toBeLessThanOrEqual(64);
      }
    } finally {
      client.release();
    }
  });
});

describe("the claim's estimated cost as the due queue grows", () => {
  it("stays about the same from 40,000 to 200,000 due jobs: a cost that grew with the queue made a server with JIT compile every claim (at 2M, 60-90 ms each)", async () => {
    const own = h.make([], { tablePrefix: "cost_" });
    await own.migrate();
    const q = own.tables;
    await h.db.query(`ALTER TABLE ${q.queue} SET (autovacuum_enabled = false)`);
    const fill = (n: number) => h.db.query(
      `INSERT INTO ${q.queue} (id, job_name, payload, run_at) SELECT gen_random_uuid(), 'noop', '{}', now() - interval '1 minute' FROM generate_series(1, $1) g`, [n]);
    // A claim as a busy tick sends it: its slot, a split with keyed jobs (a job has a limit), fan-out.
    const step = buildStep(q, {
      slot: { mode: "hold", slot: 1, owner: crypto.randomUUID(), leaseMs: 60_000 },
      claim: { limit: 32, owner: crypto.randomUUID(), leaseMs: 60_000, flow: { limitsJson: "{}", split: true, maxKeys: 8, cursor: "" } },
      fanOut: { maxTicks: 4, concurrency: 32, want: 32, room: 32, bound: 160, maxSpawn: 3, reserveMs: 30_000, tokens: [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()] },
    })!;
    const cost = async () => {
      await h.db.query(`ANALYZE ${q.queue}`);
      const client = await h.main.connect();
      try {
        await client.query("BEGIN");
        await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
        await client.query(`PREPARE cost_step AS ${step.text}`);
        const args = step.values.map((v) => (v === null ? "NULL" : `'${String(typeof v === "object" ? JSON.stringify(v) : v).replaceAll("'", "''")}'`));
        const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: { "Total Cost": number } }> }>(`EXPLAIN (FORMAT JSON) EXECUTE cost_step(${args.join(", ")})`);
        await client.query("ROLLBACK");
        await client.query("DEALLOCATE cost_step");
        return rows[0]!["QUERY PLAN"][0]!.Plan["Total Cost"];
      } finally {
        client.release();
      }
    };
    await fill(40_000);
    const small = await cost();
    await fill(160_000);
    const large = await cost();
    expect(large / small, `${small} -> ${large}`).toBeLessThan(1.3);
    // Under PostgreSQL's default jit_above_cost with room to spare.
    expect(large).toBeLessThan(20_000);
  });
});

// A tick's unkeyed claims resume where its previous claim ended instead of at the head of the
// dispatch index, which keeps a dead entry for every job claimed since the last vacuum.
import { describe, expect, it } from "vitest";
import type { DispatchPosition } from "../src/store/tick/claim.js";
import { buildStep, runStep } from "../src/store/tick/step.js";
import { DispatchHint, HEAD_SCAN_MS } from "../src/tick/dispatch-hint.js";
import { harness } from "./support/harness.js";

const h = await harness("dispatch_hint");

interface PlanNode {
  "Index Name"?: string;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

/** Pages of the dispatch index the statement read. */
const dispatchPages = (node: PlanNode, index: string): number =>
  (node["Index Name"] === index ? (node["Shared Hit Blocks"] ?? 0) + (node["Shared Read Blocks"] ?? 0) : 0) +
  (node.Plans ?? []).reduce((sum, child) => sum + dispatchPages(child, index), 0);

/** A queue of its own, never vacuumed, with `n` due jobs one millisecond apart (priority 0). */
const backlog = async (prefix: string, n: number) => {
  const j = h.make([], { tablePrefix: prefix });
  await j.migrate();
  const q = j.tables.queue;
  await h.db.query(`ALTER TABLE ${q} SET (autovacuum_enabled = false)`);
  await h.db.query(
    `INSERT INTO ${q} (id, job_name, payload, run_at)
     SELECT gen_random_uuid(), 'noop', jsonb_build_object('i', g), now() - interval '1 hour' + g * interval '1 millisecond'
     FROM generate_series(1, $1::int) g`,
    [n],
  );
  await h.db.query(`ANALYZE ${q}`);
  return j.tables;
};

type Tables = Awaited<ReturnType<typeof backlog>>;

const claim = async (t: Tables, limit: number, after?: DispatchPosition) =>
  runStep(h.db, t, { claim: { limit, owner: crypto.randomUUID(), leaseMs: 60_000, after } });

describe("where a tick's claim starts in the dispatch index", () => {
  it("resuming after the previous claim reads a few pages however many jobs were claimed since the last vacuum; from the head, it reads past all of them", async () => {
    const t = await backlog("pages_", 9_000);
    const index = `${t.queue.replace(/queue$/, "")}queue_dispatch_idx`;
    const pagesRead = async (after?: DispatchPosition) => {
      const step = buildStep(t, { claim: { limit: 32, owner: crypto.randomUUID(), leaseMs: 60_000, after } })!;
      const client = await h.main.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${step.text}`, step.values);
        return dispatchPages(rows[0]!["QUERY PLAN"][0]!.Plan, index);
      } finally {
        await client.query("ROLLBACK");
        client.release();
      }
    };
    let at: DispatchPosition | undefined;
    const claimUpTo = async (total: number, done: number) => {
      for (; done < total; done += 200) at = (await claim(t, 200, at)).dispatchedTo ?? undefined;
      return done;
    };
    let done = await claimUpTo(1_000, 0);
    const resumedEarly = await pagesRead(at);
    const headEarly = await pagesRead();
    done = await claimUpTo(8_000, done);
    const resumedLate = await pagesRead(at);
    const headLate = await pagesRead();
    // 7,000 more dead entries are tens of pages the head scan steps over.
    expect(headLate - headEarly).toBeGreaterThan(15);
    expect(resumedLate).toBeLessThanOrEqual(resumedEarly + 2);
    expect(resumedLate).toBeLessThan(10);
  });

  it("takes jobs of a higher priority enqueued since first, then continues after the position, never a job twice", async () => {
    const t = await backlog("priority_", 300);
    const first = await claim(t, 100);
    const at = first.dispatchedTo!;
    expect(at.id).toBe(first.claimed.at(-1)!.id);
    await h.db.query(`INSERT INTO ${t.queue} (id, job_name, payload, priority) SELECT gen_random_uuid(), 'urgent', '{}', 10 FROM generate_series(1, 5)`);
    const next = await claim(t, 100, at);
    expect(next.claimed.slice(0, 5).map((r) => r.job_name)).toEqual(Array(5).fill("urgent"));
    const rest = next.claimed.slice(5);
    expect(rest).toHaveLength(95);
    const firstIds = new Set(first.claimed.map((r) => r.id));
    expect(rest.filter((r) => firstIds.has(r.id))).toEqual([]);
    expect(rest.every((r) => r.run_at > at.runAt)).toBe(true);
    // The position is the last unkeyed job in dispatch order: the priority-0 one, not an urgent one.
    expect(next.dispatchedTo!.priority).toBe(0);
    expect(next.dispatchedTo!.id).toBe(rest.at(-1)!.id);
  });

  it("a job due before the position is taken when the range after it does not fill the claim", async () => {
    const t = await backlog("before_", 120);
    const first = await claim(t, 100);
    await h.db.query(`INSERT INTO ${t.queue} (id, job_name, payload, run_at) VALUES (gen_random_uuid(), 'late', '{}', now() - interval '2 hours')`);
    const full = await claim(t, 10, first.dispatchedTo!);
    expect(full.claimed.map((r) => r.job_name)).not.toContain("late");
    const short = await claim(t, 50, full.dispatchedTo!);
    expect(short.claimed.map((r) => r.job_name)).toEqual(["late", ...Array(10).fill("noop")]);
    expect((await claim(t, 50, short.dispatchedTo!)).claimed).toEqual([]);
  });
});

describe("the dispatch hint", () => {
  const at = (id: string): { dispatchedTo: DispatchPosition } => ({ dispatchedTo: { priority: 0, runAt: "2026-01-01T00:00:00.000001+00:00", id } });

  it("starts at the head until a claim says where it ended, then resumes there, and at the head again every HEAD_SCAN_MS", () => {
    const hint = new DispatchHint();
    expect(hint.next(1_000)).toBeUndefined();
    hint.saw(at("a"));
    expect(hint.next(1_001)?.id).toBe("a");
    hint.saw({ dispatchedTo: null });
    expect(hint.next(1_002)?.id).toBe("a");
    hint.saw(at("b"));
    expect(hint.next(1_000 + HEAD_SCAN_MS - 1)?.id).toBe("b");
    expect(hint.next(1_000 + HEAD_SCAN_MS)).toBeUndefined();
    expect(hint.next(1_000 + HEAD_SCAN_MS + 1)?.id).toBe("b");
  });
});

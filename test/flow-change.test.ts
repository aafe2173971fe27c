// A rate limit whose periodMs changes in code while jobs are queued: the jobs keep their keys.
// A key is stored under its limit's scope, which names the period; the admission finds it under the
// scope of the same job or group with the old period (before, every such job fell into one bucket).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("flow_change");
const tenant = z.object({ tenant: z.string() });

describe("a rate limit changed in code", () => {
  it.each([
    ["a job's own limit", undefined],
    ["a group's limit", "partner"],
  ])("%s: a new periodMs keeps each queued job's key", async (_label, group) => {
    const ran: string[] = [];
    const define = (periodMs: number) =>
      defineJob({ name: "per-tenant-rate", schema: tenant, rateLimit: { limit: 1, periodMs, key: (p) => p.tenant, ...(group ? { group } : {}) }, handler: ({ tenant: t }) => void ran.push(t) });
    const before = await h.isolated([define(60_000)]);
    await before.enqueueMany(["a", "b", "c", "d", "e"].map((t) => ({ job: "per-tenant-rate" as const, payload: { tenant: t } })));
    const after = h.make([define(30_000)], { tablePrefix: before.settings.tablePrefix });
    const report = await after.tick({ budgetMs: 2_000, claimCutoffMs: 1_000, concurrency: 10 });
    expect(report.succeeded).toBe(5);
    expect(ran.sort()).toEqual(["a", "b", "c", "d", "e"]);
    // Each key counts in its own bucket of the new period.
    const scope = group ? `g:${group}:30000` : "j:per-tenant-rate:30000";
    expect((await h.rows<{ bucket: string }>(`SELECT bucket FROM ${after.tables.flow} ORDER BY bucket`)).map((r) => r.bucket)).toEqual(
      ["a", "b", "c", "d", "e"].map((t) => `r:${scope}:${t}`),
    );
  });

  it("a job held by the limit under its new period says which limit it waits on (it said none)", async () => {
    const define = (periodMs: number) => defineJob({ name: "hourly", schema: tenant, rateLimit: { limit: 1, periodMs, key: (p) => p.tenant }, handler: () => {} });
    const before = await h.isolated([define(3_600_000)]);
    await before.enqueueMany([0, 1, 2].map(() => ({ job: "hourly" as const, payload: { tenant: "acme" } })));
    const after = h.make([define(1_800_000)], { tablePrefix: before.settings.tablePrefix });
    expect(await after.tick({ budgetMs: 1_500, claimCutoffMs: 500 })).toMatchObject({ succeeded: 1 });
    const held = await h.rows<{ id: string }>(`SELECT id FROM ${after.tables.queue} WHERE status = 'queued'`);
    expect(held).toHaveLength(2);
    expect((await after.get(held[0]!.id))!.waitingOn).toEqual({ kind: "rate", key: "acme", limit: 1, periodMs: 1_800_000, starts: 1 });
  });
});

describe("a limit added in code while jobs are queued", () => {
  it("does not apply to them: a concurrency limit beside their rate limit, or a second rate rule, never puts every tenant in one bucket", async () => {
    const started: Array<{ tenant: string; at: number; until: number }> = [];
    const handler = async ({ tenant: t }: { tenant: string }) => {
      const at = Date.now();
      await new Promise((done) => setTimeout(done, 200));
      started.push({ tenant: t, at, until: Date.now() });
    };
    const v1 = defineJob({ name: "sync", schema: tenant, rateLimit: { limit: 10, periodMs: 60_000, key: (p) => p.tenant }, handler });
    const before = await h.isolated([v1]);
    await before.enqueueMany(["a", "b", "c", "d", "e"].map((t) => ({ job: "sync" as const, payload: { tenant: t } })));
    const v2 = defineJob({
      name: "sync",
      schema: tenant,
      concurrency: { limit: 1, key: (p) => p.tenant },
      rateLimit: [{ limit: 10, periodMs: 60_000, key: (p) => p.tenant }, { limit: 1, periodMs: 60_000, group: "everyone", key: () => "all" }],
      handler,
    });
    const after = h.make([v2], { tablePrefix: before.settings.tablePrefix });
    const [one] = await h.rows<{ id: string }>(`SELECT id FROM ${after.tables.queue} LIMIT 1`);
    // Nothing runs yet: nothing waits on a limit the job did not have.
    expect((await after.get(one!.id))!.waitingOn).toBeNull();
    const report = await after.tick({ budgetMs: 3_000, claimCutoffMs: 1_000, concurrency: 10 });
    expect(report.succeeded).toBe(5);
    // All five at once: their tenants differ, and the new rules do not bind them.
    const overlap = started.filter((s) => started.some((o) => o !== s && o.at < s.until && s.at < o.until)).length;
    expect(overlap).toBe(5);
    // A job enqueued now has every key, and every rule applies to it.
    await after.enqueue("sync", { tenant: "a" });
    await after.enqueue("sync", { tenant: "b" });
    expect((await after.tick({ budgetMs: 2_000, claimCutoffMs: 1_000, concurrency: 10 })).succeeded).toBe(1);
  });
  it("a per-tenant rate rule added beside the job's own rate limit of the same scope prefix takes no key from it", async () => {
    const ran: string[] = [];
    const v1 = defineJob({ name: "sync", schema: tenant, rateLimit: { limit: 1_000, periodMs: 1_000 }, handler: ({ tenant: t }) => void ran.push(t) });
    const before = await h.isolated([v1]);
    const tenants = Array.from({ length: 10 }, (_, i) => `t${i}`);
    await before.enqueueMany([...tenants, ...tenants].map((t) => ({ job: "sync" as const, payload: { tenant: t } })));
    const v2 = defineJob({
      name: "sync",
      schema: tenant,
      rateLimit: [{ limit: 1_000, periodMs: 1_000 }, { limit: 2, periodMs: 60_000, key: (p) => p.tenant }],
      handler: ({ tenant: t }) => void ran.push(t),
    });
    const after = h.make([v2], { tablePrefix: before.settings.tablePrefix });
    // The new rule is not theirs: all 20 run (it ran 2, every tenant's jobs in one bucket keyed '').
    const report = await after.tick({ budgetMs: 3_000, claimCutoffMs: 1_000, concurrency: 32 });
    expect(report.succeeded).toBe(20);
    expect((await h.rows<{ bucket: string }>(`SELECT bucket FROM ${after.tables.flow} ORDER BY bucket`)).map((r) => r.bucket)).toEqual(["r:j:sync:1000:"]);
  });
});

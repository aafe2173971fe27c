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
});

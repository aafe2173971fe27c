// A replay is a new life of the job: it counts under the limits its job has in code now. Jobs died of
// a provider's 429s, a limit was added, the letters were replayed: they must not flood the provider again.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, isJobsError, PermanentJobError } from "../src/index.js";
import { flowKeysFor } from "../src/flow/keys.js";
import { rekeyedReplay } from "../src/store/admin/replay-rekey.js";
import { harness } from "./support/harness.js";

const h = await harness("replay_limits");
const tenant = z.object({ tenant: z.string(), region: z.string() });

const dies = defineJob({ name: "sync", schema: tenant, handler: () => { throw new PermanentJobError("429"); } });

/** v1 of the job (no limits) kills `n` jobs of tenant acme; returns the letters' ids and the table prefix. */
const lettersOfV1 = async (n: number) => {
  const v1 = await h.isolated([dies]);
  const done = await v1.enqueueMany(Array.from({ length: n }, (_, i) => ({ job: "sync" as const, payload: { tenant: "acme", region: `r${i % 2}` } })));
  await v1.tick({ budgetMs: 3_000 });
  expect((await v1.deadLetters.list({})).items).toHaveLength(n);
  return { ids: done.map((d) => d.id), prefix: v1.settings.tablePrefix };
};

/** v2: the same job with a concurrency limit of 1 per `key`, recording how many ran at once. */
const limitedV2 = (prefix: string, key: (p: z.infer<typeof tenant>) => string) => {
  let running = 0;
  const peaks: number[] = [];
  const job = defineJob({
    name: "sync",
    schema: tenant,
    concurrency: { limit: 1, key },
    handler: async () => {
      peaks.push(++running);
      await new Promise((done) => setTimeout(done, 50));
      running--;
    },
  });
  return { jobs: h.make([job], { tablePrefix: prefix, concurrency: 10 }), peaks };
};

const keysOf = async (table: string) =>
  h.rows<{ concurrency_key: string | null; flow_key: string | null }>(`SELECT concurrency_key, flow_key FROM ${table} ORDER BY id`);

describe("a replay counts under the job's limits as they are now", () => {
  it("a limit added since the letters died holds their bulk replay (4 ran at once under a limit of 1)", async () => {
    const { prefix } = await lettersOfV1(4);
    const { jobs, peaks } = limitedV2(prefix, (p) => p.tenant);
    expect((await jobs.deadLetters.replayMany({ job: "sync" })).replayed).toHaveLength(4);
    expect(await keysOf(jobs.tables.queue)).toEqual(Array.from({ length: 4 }, () => ({ concurrency_key: "acme", flow_key: "c:sync:acme" })));
    for (let i = 0; i < 8 && peaks.length < 4; i++) await jobs.tick({ budgetMs: 2_000, claimCutoffMs: 1_000 });
    expect(peaks).toEqual([1, 1, 1, 1]);
  });

  it("a single replay and a replay by ids use the key function as it is now", async () => {
    const { ids, prefix } = await lettersOfV1(3);
    const { jobs } = limitedV2(prefix, (p) => p.region);
    await jobs.deadLetters.replay(ids[0]!);
    expect((await jobs.deadLetters.replayMany({ ids: [ids[1]!, ids[2]!] })).replayed.sort()).toEqual([ids[1], ids[2]].sort());
    const rows = await h.rows<{ id: string; concurrency_key: string }>(`SELECT id, concurrency_key FROM ${jobs.tables.queue}`);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.concurrency_key]))).toEqual({ [ids[0]!]: "r0", [ids[1]!]: "r1", [ids[2]!]: "r0" });
  });

  it("a key function that refuses a letter's payload: one replay is invalid_options, a bulk one skips that letter; the letters stay", async () => {
    const { ids, prefix } = await lettersOfV1(2);
    const { jobs } = limitedV2(prefix, (p) => (p.region === "r1" ? "" : p.tenant));
    const error = await jobs.deadLetters.replay(ids[1]!).catch((e: unknown) => e);
    expect(isJobsError(error) && error.code).toBe("invalid_options");
    expect((error as Error).message).toMatch(/concurrency\.key of job sync must return a string/);
    const bulk = await jobs.deadLetters.replayMany({ ids });
    expect(bulk.replayed).toEqual([ids[0]]);
    expect(bulk.skipped).toEqual([{ id: ids[1], reason: "invalid_options", message: expect.stringMatching(/concurrency\.key of job sync/) }]);
    expect((await jobs.deadLetters.list({})).items.map((d) => d.id)).toEqual([ids[1]]);
  });

  it("a limit removed since: the replayed job is no longer keyed", async () => {
    const { jobs: v2, peaks } = limitedV2((await h.isolated([dies])).settings.tablePrefix, (p) => p.tenant);
    void peaks;
    const v2Dies = defineJob({ name: "sync", schema: tenant, concurrency: { limit: 1, key: (p) => p.tenant }, handler: () => { throw new PermanentJobError("429"); } });
    const killer = h.make([v2Dies], { tablePrefix: v2.settings.tablePrefix });
    const [done] = await killer.enqueueMany([{ job: "sync", payload: { tenant: "acme", region: "r0" } }]);
    await killer.tick({ budgetMs: 2_000 });
    // v3: no limit, but another job keeps flow control on.
    const limitedOther = defineJob({ name: "other", schema: z.object({}), concurrency: { limit: 1 }, handler: () => {} });
    const v3 = h.make([dies, limitedOther], { tablePrefix: v2.settings.tablePrefix });
    await v3.deadLetters.replay(done!.id);
    expect(await keysOf(v3.tables.queue)).toEqual([{ concurrency_key: null, flow_key: null }]);
  });
});

describe("a bulk replay whose letters change between its read and its replay", () => {
  it("reads them again, and after three tries is a conflict that replays nothing", async () => {
    const { ids, prefix } = await lettersOfV1(2);
    const { jobs } = limitedV2(prefix, (p) => p.tenant);
    // Each read is followed by the letter being replayed and dying again (one more replay) `bumps` times.
    let bumps = 1;
    let reads = 0;
    let table = jobs.tables.deadLetters;
    const db = {
      query: async (text: string, params?: unknown[], options?: object) => {
        const result = await h.db.query(text, params, options);
        if (text.includes("json_agg(json_build_object('id'")) {
          reads++;
          if (bumps-- > 0) await h.db.query(`UPDATE ${table} SET replays = replays + 1 WHERE id = $1`, [ids[0]]);
        }
        return result;
      },
    } as typeof h.db;
    const rekey = { jobs: ["sync"], keysOf: (job: string, payload: unknown, id: string) => ({ keys: flowKeysFor(jobs.registry.get(job)!, payload, { id }) }) };
    const done = await rekeyedReplay(db, jobs.tables, { job: "sync" }, rekey);
    expect([reads, done.replayed.length]).toEqual([2, 2]);
    expect(await keysOf(jobs.tables.queue)).toEqual([{ concurrency_key: "acme", flow_key: "c:sync:acme" }, { concurrency_key: "acme", flow_key: "c:sync:acme" }]);

    const { ids: again, prefix: p2 } = await lettersOfV1(2);
    const second = limitedV2(p2, (p) => p.tenant).jobs;
    bumps = 10;
    reads = 0;
    ids[0] = again[0]!;
    table = second.tables.deadLetters;
    const error = await rekeyedReplay(db, second.tables, { ids: again }, rekey).catch((e: unknown) => e);
    expect([reads, isJobsError(error) && error.code]).toEqual([3, "conflict"]);
    expect((await second.deadLetters.list({})).items).toHaveLength(2);
  });
});

describe("a bulk replay whose letters' payloads are large together", () => {
  it("reads them in parts of at most 4 MiB and replays every letter with its keys (it read all of them into the app at once)", async () => {
    const v1 = await h.isolated([dies]);
    const pad = "x".repeat(200_000);
    await v1.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ job: "sync" as const, payload: { tenant: `t${i}`, region: "r0", pad } as never })));
    await v1.tick({ budgetMs: 5_000, concurrency: 50 });
    const { jobs } = limitedV2(v1.settings.tablePrefix, (p) => p.tenant);
    let largest = 0;
    let reads = 0;
    const db = {
      query: async (text: string, params?: unknown[], options?: object) => {
        const result = await h.db.query(text, params, options);
        if (text.includes("AS covered")) {
          reads++;
          largest = Math.max(largest, JSON.stringify(result.rows).length);
        }
        return result;
      },
    } as typeof h.db;
    const rekey = { jobs: ["sync"], keysOf: (job: string, payload: unknown, id: string) => ({ keys: flowKeysFor(jobs.registry.get(job)!, payload, { id }) }) };
    // By filter, with a limit past the first part: 25 replayed, and a cursor to go on from.
    const first = await rekeyedReplay(db, jobs.tables, { job: "sync", limit: 25 }, rekey);
    expect(first.replayed).toHaveLength(25);
    expect(first.nextCursor).not.toBeNull();
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(largest).toBeLessThan(4.5 * 1024 * 1024);
    // By ids: the other five, and one that is not there.
    const rest = (await jobs.deadLetters.list({ limit: 100 })).items.map((d) => d.id);
    const missing = "00000000-0000-7000-8000-000000000000";
    const second = await rekeyedReplay(db, jobs.tables, { ids: [...rest, missing] }, rekey);
    expect(second.replayed.sort()).toEqual(rest.sort());
    expect(second.skipped).toEqual([{ id: missing, reason: "not_found" }]);
    const keys = await h.rows<{ concurrency_key: string }>(`SELECT concurrency_key FROM ${jobs.tables.queue}`);
    expect(keys.map((k) => k.concurrency_key).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `t${i}`).sort());
  }, 60_000);
});

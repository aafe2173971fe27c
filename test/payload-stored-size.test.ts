// What a payload costs once stored and read back: jsonb writes numbers with all their digits, and a
// claim brings its payloads back as one string, so both are bounded.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { exponentGrowth } from "../src/payload.js";
import { settingsFromEnv } from "../src/settings/library.js";
import { MAX_CLAIM_BYTES, tickLimits } from "../src/tick/limits.js";
import { harness } from "./support/harness.js";

const h = await harness("payload_size");
const numbers = defineJob({ name: "numbers", schema: z.array(z.number()), handler: () => {} });

describe("a payload's size as stored", () => {
  it("counts numbers as PostgreSQL writes them back (the text of each, checked against the server's)", async () => {
    const values = [1e308, 1.5e-7, -2.5e25, 1e-300, Number.MAX_VALUE, 5e-324, 1.2345e21, 12, 0.5, -3];
    const { rows } = await h.db.query<{ n: number }>(`SELECT length(x::text)::int AS n FROM jsonb_array_elements($1::jsonb) x`, [JSON.stringify(values)]);
    for (const [i, v] of values.entries()) {
      expect(String(JSON.stringify(v)).length + exponentGrowth(JSON.stringify(v)), String(v)).toBe(rows[i]!.n);
    }
    // Inside strings, nothing grows.
    expect(exponentGrowth(JSON.stringify({ "1e+308": "2e+300", s: 'say "1e+99"' }))).toBe(0);
  });

  it("refuses a payload within the limit as JSON that PostgreSQL would store 44 times larger, and stores nothing", async () => {
    const jobs = await h.isolated([numbers], { maxPayloadBytes: 100_000 });
    const payload = Array.from({ length: 1_000 }, () => 1e308);
    expect(JSON.stringify(payload).length).toBeLessThan(100_000);
    await expect(jobs.enqueue("numbers", payload)).rejects.toMatchObject({
      code: "payload_too_large",
      message: expect.stringMatching(/as stored \(PostgreSQL writes a number with an exponent in all its digits\)/),
    });
    expect(await h.rows(`SELECT 1 FROM ${jobs.tables.queue}`)).toEqual([]);
    // Of the same size in plain digits, it is taken.
    await jobs.enqueue("numbers", Array.from({ length: 1_000 }, () => 1.5));
  });
});

describe("a claim's rows", () => {
  it("come in claims of at most 256 MiB of payloads at their limit: 128 jobs at the default 1 MiB, more for smaller payloads", () => {
    const at = (env: Record<string, string>) => tickLimits(settingsFromEnv({ JOBS_CONCURRENCY: "3000", ...env }), {}).batchSize;
    expect(at({})).toBe(128);
    expect(at({ JOBS_MAX_PAYLOAD_BYTES: String(128 * 1024) })).toBe(1_024);
    expect(at({ JOBS_MAX_PAYLOAD_BYTES: String(16 * 1024 * 1024) })).toBe(MAX_CLAIM_BYTES / (2 * 16 * 1024 * 1024));
    // Over Neon's HTTP endpoint (5 MiB of payloads a result), at least one.
    expect(tickLimits(settingsFromEnv({ JOBS_MAX_PAYLOAD_BYTES: String(16 * 1024 * 1024) }), {}, undefined, 5 * 1024 * 1024).batchSize).toBe(1);
    expect(tickLimits(settingsFromEnv({}), {}, undefined, 5 * 1024 * 1024).batchSize).toBe(2);
    expect(tickLimits(settingsFromEnv({ JOBS_CONCURRENCY: "100" }), {}).batchSize).toBe(100);
    expect(tickLimits(settingsFromEnv({ JOBS_CONCURRENCY: "600" }), { batchSize: 300 }).batchSize).toBe(128);
  });
});

describe("a handler's output as stored", () => {
  it("is counted as jsonb writes it back: 42 KB of 1e308 (1.9 MB stored) passes the 64 KiB limit and is marked truncated", async () => {
    const huge = defineJob({ name: "huge-output", schema: z.object({}), handler: () => Array.from({ length: 6_000 }, () => 1e308) });
    const small = defineJob({ name: "small-output", schema: z.object({}), handler: () => [1e308, 1.5e-7] });
    const jobs = await h.isolated([huge, small]);
    const a = await jobs.enqueue("huge-output", {});
    const b = await jobs.enqueue("small-output", {});
    await jobs.tick({ budgetMs: 5_000 });
    expect(await jobs.get(a.id)).toMatchObject({ status: "succeeded", outputTruncated: true, output: null });
    expect(await jobs.get(b.id)).toMatchObject({ status: "succeeded", outputTruncated: false, output: [1e308, 1.5e-7] });
  });
});

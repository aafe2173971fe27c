// A settle statement carries each run's history (output, logs, stack): a batch of runs at those caps is
// megabytes. Over Neon's HTTP endpoint (10 MiB a request, HTTP 413 past it) such a batch must still settle:
// it is cut by size before it is sent, and a request refused as too large is settled in parts.
import { neon, neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, fromNeonHttp } from "../src/index.js";
import { byBytes, MAX_SETTLE_BYTES } from "../src/tick/settler.js";
import { harness } from "./support/harness.js";
import { type NeonHttp, startNeonHttp } from "./support/neon-http.js";

const h = await harness("settle_size");

let standIn: NeonHttp;
let small: NeonHttp;
beforeAll(async () => {
  standIn = await startNeonHttp();
  small = await startNeonHttp({ maxRequestBytes: 400_000 });
});
afterAll(async () => {
  await standIn?.close();
  await small?.close();
});

/** `n` jobs whose runs all end together, each returning `outputChars` of output and logging 16 KiB. */
const bulky = async (served: NeonHttp, n: number, outputChars: number) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  const job = defineJob({
    name: "bulky",
    schema: z.object({ n: z.number() }),
    handler: async (_p, ctx) => {
      if (++started === n) release();
      await gate;
      for (let i = 0; i < 8; i++) ctx.log("info", `line ${i} ${"\u00e9".repeat(900)}`);
      return { text: "\u00e9".repeat(outputChars) };
    },
  });
  const setup = await h.isolated([job]);
  neonConfig.fetchEndpoint = served.endpoint;
  const jobs = h.make([job], { tablePrefix: setup.settings.tablePrefix }, fromNeonHttp(neon(h.url)));
  await setup.enqueueMany(Array.from({ length: n }, (_, i) => ({ job: "bulky" as const, payload: { n: i } })));
  const report = await jobs.tick({ budgetMs: 30_000, concurrency: n });
  const [left] = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`);
  const [runs] = await h.rows<{ n: number; bytes: number }>(`SELECT count(*)::int AS n, min(length(output->>'text'))::int AS bytes FROM ${jobs.tables.runs}`);
  return { report, left: left!.n, runs: runs!, jobs };
};

describe("settle statements by size", () => {
  it("150 runs at the output cap settle over Neon's HTTP endpoint in one tick (one batch was over 10 MiB)", async () => {
    const r = await bulky(standIn, 150, 30_000);
    expect(r.report).toMatchObject({ claimed: 150, succeeded: 150, leaseLost: 0 });
    expect(r.left).toBe(0);
    expect(r.runs).toEqual({ n: 150, bytes: 30_000 });
  });

  it("a request the endpoint refuses as too large is settled in parts", async () => {
    // 400 KB a request: under the cut by size, but over this endpoint's limit.
    const r = await bulky(small, 12, 10_000);
    expect(r.report).toMatchObject({ claimed: 12, succeeded: 12, leaseLost: 0 });
    expect(r.left).toBe(0);
    expect(r.runs).toEqual({ n: 12, bytes: 10_000 });
    expect(r.jobs.logs.some((e) => e.msg === "settle statement refused a value; settling one by one")).toBe(true);
  });

  it("claims over Neon's HTTP endpoint stay under its 10 MiB response: ten payloads near the 1 MiB limit all run", async () => {
    let ran = 0;
    // 1 MB of empty strings: jsonb writes a space after each comma, and the endpoint's JSON escapes each
    // quote again, so each payload comes back as about 2 MB.
    const big = defineJob({ name: "big", schema: z.object({ s: z.array(z.string()) }), maxAttempts: 2, handler: () => void ran++ });
    const setup = await h.isolated([big]);
    neonConfig.fetchEndpoint = standIn.endpoint;
    const jobs = h.make([big], { tablePrefix: setup.settings.tablePrefix }, fromNeonHttp(neon(h.url)));
    const payload = { s: Array.from({ length: 340_000 }, () => "") };
    await setup.enqueueMany(Array.from({ length: 10 }, () => ({ job: "big" as const, payload })));
    const report = await jobs.tick({ budgetMs: 20_000, concurrency: 10 });
    expect(report).toMatchObject({ succeeded: 10, deadLettered: 0 });
    expect(ran).toBe(10);
    expect(jobs.logs.filter((e) => e.msg === "tick statement failed")).toEqual([]);
  });

  it("cuts a batch where its bytes pass the bound, keeping the order", () => {
    const s = (bytes: number, id: string) => ({ kind: "complete", run: {}, item: { id, history: { bytes } } }) as unknown as Parameters<typeof byBytes>[0][number];
    const parts = byBytes([s(3_000_000, "a"), s(1_000_000, "b"), s(200_000, "c"), s(9_000_000, "d"), s(1, "e")], MAX_SETTLE_BYTES);
    expect(parts.map((p) => p.map((x) => x.item.id))).toEqual([["a", "b"], ["c"], ["d"], ["e"]]);
  });
});

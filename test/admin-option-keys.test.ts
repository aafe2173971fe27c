// The library's admin calls refuse a key they do not take, as the HTTP API refuses such query
// parameters: a misspelt filter was no filter, and its answer every row.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, PermanentJobError } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("option_keys");
const fails = defineJob({ name: "fails", schema: z.object({ n: z.number() }), handler: () => { throw new PermanentJobError("no"); } });
const jobs = await h.isolated([fails]);

describe("unknown filter and option keys", () => {
  it("are invalid_options naming the key (and the spelling meant), for every list and a rerun; known ones still filter", async () => {
    await jobs.enqueue("fails", { n: 1 }, { correlationId: "order-1" });
    await jobs.enqueue("fails", { n: 2 }, { correlationId: "order-2" });
    await jobs.tick({ budgetMs: 5_000 });
    const calls: Array<[string, () => Promise<unknown>, string, string | undefined]> = [
      ["runs.list", () => jobs.runs.list({ correlationID: "order-1" } as never), "correlationID", "correlationId"],
      ["list", () => jobs.list({ state: "queued" } as never), "state", undefined],
      ["deadLetters.list", () => jobs.deadLetters.list({ Job: "fails" } as never), "Job", "job"],
      ["runs.rerun", async () => jobs.runs.rerun((await jobs.runs.list()).items[0]!.id, { priority: 5 } as never), "priority", undefined],
    ];
    for (const [name, call, key, meant] of calls) {
      const e = await call().catch((x: unknown) => x);
      expect([name, e]).toMatchObject([name, { code: "invalid_options", details: { field: key } }]);
      expect((e as Error).message).toContain(JSON.stringify(key));
      if (meant) expect((e as Error).message).toContain(`did you mean ${JSON.stringify(meant)}`);
    }
    expect((await jobs.runs.list({ correlationId: "order-1" })).items.map((r) => r.correlationId)).toEqual(["order-1"]);
    expect((await jobs.deadLetters.list({ job: "fails" })).items).toHaveLength(2);
    expect((await jobs.list({ status: "queued" })).items).toHaveLength(0);
    // Nothing was rerun by the refused call.
    expect((await jobs.list()).items).toHaveLength(0);
  });
});

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("smoke");

describe("smoke", () => {
  it("enqueues and ticks", async () => {
    const seen: string[] = [];
    const hello = defineJob({ name: "hello", schema: z.object({ name: z.string() }), handler: (p) => void seen.push(p.name) });
    const jobs = h.make([hello]);
    const r = await jobs.enqueue("hello", { name: "a" });
    expect(r.deduplicated).toBe(false);
    const report = await jobs.tick({ budgetMs: 5000 });
    console.log(report, jobs.logs);
    expect(seen).toEqual(["a"]);
  });
});

import { expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";
const h = await harness("undefined_options");
it("an option or filter passed as undefined is as one left out (the types say so under exactOptionalPropertyTypes)", async () => {
  const j = defineJob({ name: "j", schema: z.object({}), handler: () => {} });
  const jobs = await h.isolated([j]);
  const a = await jobs.enqueue("j", {}, { runAt: undefined, delayMs: 5_000, idempotencyKey: undefined, priority: undefined, maxAttempts: undefined, correlationId: undefined, debounce: undefined });
  expect(a.id).toBeTruthy();
  const b = await jobs.enqueue("j", {}, { runAt: undefined, delayMs: undefined });
  expect(b.id).toBeTruthy();
  const l = await jobs.runs.list({ cursor: undefined, job: undefined, outcome: undefined, limit: undefined });
  expect(l.items).toEqual([]);
  expect((await jobs.list({ cursor: undefined, status: undefined })).items).toHaveLength(2);
  expect((await jobs.deadLetters.list({ reason: undefined, cursor: undefined })).items).toEqual([]);
});

it("so is one given as undefined to the tick, the settings and the admin calls", async () => {
  const j = defineJob({ name: "u", schema: z.object({}), handler: () => {} });
  const jobs = await h.isolated([j], { concurrency: undefined, leaseMs: undefined, historyRetentionMs: undefined });
  const { id } = await jobs.enqueue("u", {});
  expect((await jobs.get(id, { payload: undefined }))?.payload).toEqual({});
  const report = await jobs.tick({ budgetMs: undefined, concurrency: undefined, batchSize: undefined, claimCutoffMs: undefined, graceMs: undefined, signal: undefined, handoff: undefined });
  expect(report.succeeded).toBe(1);
  expect((await jobs.schedules.list({ next: undefined, limit: undefined, cursor: undefined })).items).toEqual([]);
  const replayed = await jobs.deadLetters.replayMany({ job: "u", reason: undefined, limit: undefined, cursor: undefined });
  expect(replayed.replayed).toEqual([]);
});

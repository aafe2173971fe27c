import { expect, it } from "vitest";
import { z } from "zod";
import { defineJob, defineSchedule } from "../src/index.js";
import { createApp } from "../src/http/index.js";
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

it("a definition's options given as undefined take their defaults, and so do createApp's (it served no OpenAPI document)", async () => {
  const j = defineJob({ name: "d", schema: z.object({}), handler: () => {}, maxAttempts: undefined, timeoutMs: undefined, priority: undefined, backoff: { baseMs: undefined }, concurrency: undefined, rateLimit: undefined });
  const s = defineSchedule({ name: "s", cron: "0 * * * *", job: "d", payload: {}, timezone: undefined, missed: undefined, dayMatch: undefined });
  expect([s.timezone, s.missed]).toEqual(["UTC", "skip"]);
  const jobs = await h.isolated([j]);
  const { id } = await jobs.enqueue("d", {});
  expect(await jobs.get(id)).toMatchObject({ maxAttempts: 5, priority: 0 });
  const app = createApp({ jobs, env: { JOBS_API_TOKEN: "t".repeat(32) }, openApi: undefined, payloadSchemas: undefined });
  const doc = await app.request("/api/openapi.json", { headers: { authorization: `Bearer ${"t".repeat(32)}` } });
  expect(doc.status).toBe(200);
  expect(JSON.stringify(await doc.json())).toContain('"d"');
});

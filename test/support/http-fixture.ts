// The HTTP API suites' shared deployment: three jobs (one always failing), an app on its own
// database per test file, and helpers to count rows, reset, check error bodies and make dead letters.
import { expect } from "vitest";
import { z } from "zod";
import { createApp } from "../../src/http/index.js";
import { defineJob, PermanentJobError } from "../../src/index.js";
import { API_TOKENS, caller, CRON_SECRET } from "../http-support.js";
import { harness } from "./harness.js";

export const sendEmail = defineJob({ name: "send-email", schema: z.object({ to: z.string().email(), subject: z.string().optional() }), handler: () => {} });
export const echo = defineJob({ name: "ns:echo/v1.x_y", schema: z.object({ text: z.string(), tags: z.array(z.string()).optional() }), handler: () => {} });
export const fails = defineJob({
  name: "fails",
  schema: z.object({ n: z.number().int() }),
  handler: () => {
    throw new PermanentJobError("broken on purpose");
  },
});

export const expectError = (r: { status: number; body: any }, status: number, code: string) => {
  expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status, code });
  expect(typeof r.body.error.message).toBe("string");
  expect(JSON.stringify(r.body)).not.toMatch(/\bat .*\.ts:\d+/); // never a stack
};

/** A deployment of the three jobs served by `createApp`, on a database named after the file. */
export const httpFixture = async (name: string) => {
  const h = await harness(name);
  const jobs = h.make([sendEmail, echo, fails], { concurrency: 20, batchSize: 20, maxPayloadBytes: 2_000 });
  const kicks: Array<{ ids: string[]; dueNow: boolean }> = [];
  const app = createApp({
    jobs,
    env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET, JOBS_MAX_BODY_BYTES: "4096" },
    onEnqueued: (info) => void kicks.push(info),
    tickOptions: { budgetMs: 5_000 },
  });
  const call = caller(app);
  const count = async (table = "jobs_queue") => Number((await h.rows<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
  const reset = async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    await h.rows(`DELETE FROM jobs_dead_letters`);
    kicks.length = 0;
  };
  /** Makes dead letters: enqueue `fails` jobs and tick them. */
  const makeDead = async (ns: number[]) => {
    const r = await call("POST", "/api/jobs", { json: ns.map((n) => ({ job: "fails", payload: { n } })) });
    expect(r.status).toBe(201);
    await jobs.tick({ budgetMs: 5_000 });
    return (r.body.items as Array<{ id: string }>).map((i) => i.id);
  };
  return { h, jobs, kicks, app, call, count, reset, makeDead };
};

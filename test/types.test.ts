// Type-level checks, enforced by `npm run typecheck` (CI runs it before the tests):
// a wrong payload must not compile, and a specific Jobs is usable where any Jobs is expected.
import { expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "../src/client/index.js";
import { type AnyJob, createJobs, defineJob, type Jobs, type ObservedRunOutcome, type RunOutcome } from "../src/index.js";
import type { ObservedRunOutcome as OtelRunOutcome } from "../src/otel/index.js";
import { cloudflareWorker } from "../src/platform/cloudflare.js";
import type { WorkerExecutionContext } from "../src/platform/workers.js";

const email = defineJob({ name: "send-email", schema: z.object({ to: z.string() }), handler: () => {} });
const resize = defineJob({ name: "resize", schema: z.object({ width: z.number() }), handler: () => {} });
const neverQueried = { query: async () => ({ rows: [], rowCount: 0 }) };
const jobs = createJobs({ db: neverQueried, jobs: [email, resize] });

export const typedCalls = () => {
  void jobs.enqueue("send-email", { to: "a@b.c" });
  void jobs.enqueue("resize", { width: 100 });
  // @ts-expect-error the payload of send-email has no width
  void jobs.enqueue("send-email", { width: 1 });
  // @ts-expect-error no job is named like this
  void jobs.enqueue("nope", {});
  void jobs.enqueueMany([{ job: "resize", payload: { width: 1 } }]);
  // @ts-expect-error width must be a number
  void jobs.enqueueMany([{ job: "resize", payload: { width: "1" } }]);
  // A name typed as either job takes neither's payload: it compiled, and failed at run time as send-email.
  const either = Math.random() > 0.5 ? ("send-email" as const) : ("resize" as const);
  // @ts-expect-error the payload must suit every job the name may be
  void jobs.enqueue(either, { width: 1 });
  // @ts-expect-error the same in a batch
  void jobs.enqueueMany([{ job: either, payload: { width: 1 } }]);
  // The typed client too.
  const client = createClient<readonly [typeof email, typeof resize]>({ baseUrl: "http://127.0.0.1:1", token: "t" });
  // @ts-expect-error the payload must suit every job the name may be
  void client.enqueue(either, { width: 1 });
  void client.enqueue("resize", { width: 1 });
  // One name, as a variable: still typed by its job.
  const one = "resize" as const;
  void jobs.enqueue(one, { width: 1 });
  // A debounce needs its key: one that may be undefined compiled, and was invalid_options at every run.
  const maybeKey = undefined as string | undefined;
  void jobs.enqueue("resize", { width: 1 }, { debounce: { key: "k", delayMs: 1 } });
  // @ts-expect-error the debounce key is a string
  void jobs.enqueue("resize", { width: 1 }, { debounce: { key: maybeKey, delayMs: 1 } });
};

// One name per concept across entry points: pgtick/otel called the observed outcome RunOutcome, as pgtick
// calls the history's (which has "cancelled" and no "lease_lost").
export const outcomes = (observed: ObservedRunOutcome): OtelRunOutcome[] => {
  // @ts-expect-error a run in the history never ends as lease_lost
  const lost: RunOutcome = "lease_lost";
  const cancelled: RunOutcome = "cancelled";
  void [lost, cancelled];
  return [observed, "lease_lost"];
};

// The Env `wrangler types` writes is an interface (no index signature): a typed Worker compiles with it.
interface WorkerEnv {
  readonly DATABASE_URL: string;
  readonly JOBS_API_TOKEN: string;
}
export const typedWorker = (env: WorkerEnv, ctx: WorkerExecutionContext) => {
  const worker = cloudflareWorker({ jobs: [email, resize] });
  void worker.fetch(new Request("https://example.test/api/health"), env, ctx);
  void worker.scheduled({ cron: "* * * * *", scheduledTime: 0 } as Parameters<typeof worker.scheduled>[0], env, ctx);
};

it("a specific Jobs is assignable to Jobs<readonly AnyJob[]> (what the HTTP app and platforms take)", () => {
  const general: Jobs<readonly AnyJob[]> = jobs;
  expect([...general.registry.keys()]).toEqual(["send-email", "resize"]);
});

// `pgtick/vercel/tick`: Vercel Cron's target on the Node.js runtime, `GET /api/tick` with
// Authorization: Bearer $CRON_SECRET; also where kicks and extra ticks (fan-out, continuation)
// are posted. node-postgres over TCP (any PostgreSQL, Neon included); a pool per tick.
import { getDeadline, waitUntil } from "@vercel/functions";
import type { JobsModule } from "../module/jobs-module.js";
import type { Env } from "../settings/parse.js";
import { type PlatformLimit, VERCEL_TICK } from "./budget.js";
import { deploymentApp } from "./deployment-app.js";
import { runInvocationTick } from "./invocation.js";
import { canPostTick, postTick } from "./kick.js";
import { pgPool } from "./pg.js";
import type { TickRequest } from "../http/tick-request.js";
import type { VercelOptions } from "./vercel.js";

/** The shape of a jobs module, the argument of this entry point. */
export type { JobsModule } from "../module/jobs-module.js";
export type { PlatformLimit } from "./budget.js";

/**
 * This invocation's limit: what is left until the deadline Vercel gives it (a `maxDuration` raised
 * past 60 s raises the budget with it); without one (local runs, tests) maxDuration stands.
 */
export const vercelLimit = (): PlatformLimit => {
  const deadline = getDeadline();
  if (!deadline) return VERCEL_TICK;
  const left = deadline.getTime() - Date.now();
  return { ...VERCEL_TICK, limitMs: left, hardLimitMs: left };
};

/** `export const { GET, POST } = vercelTick(jobsModule)` in `api/tick`'s function. */
export const vercelTick = (module: JobsModule, options: VercelOptions = {}) => {
  const env = options.env ?? process.env;
  // Each extra tick is a new invocation of this function, posted to the deployment's own URL; it answers 202 at once.
  // The tick hears of a refusal (its slot is then freed); the invocation is kept until the answer.
  const spawn = (handoffs: readonly { slot: number; token: string }[]) => {
    const sent = Promise.all(handoffs.map((handoff) => postTick(env, { handoff, async: true })));
    waitUntil(sent.catch(() => {}));
    return sent;
  };
  const d = {
    module,
    env,
    platform: vercelLimit,
    connect: pgPool,
    connectRequest: pgPool,
    // Without a URL to post to and the secret to send, a tick never reserves slots it cannot hand on.
    tick: (req: TickRequest) => runInvocationTick(d, req, { spawn: canPostTick(env) ? spawn : undefined }),
    background: (work: Promise<unknown>) => waitUntil(work),
  };
  const app = deploymentApp(d);
  const handler = (request: Request): Promise<Response> => Promise.resolve(app.fetch(request));
  return { GET: handler, POST: handler };
};

import type { Env, JobsSettings } from "../settings/library.js";
import type { Db } from "../db.js";
import type { TickReport } from "../tick/types.js";
import { WORKERS_SCHEDULED } from "./budget.js";
import { neonPool } from "./neon.js";
import { runPlatformTick, type Ticker } from "./invocation.js";
import type { WorkerExecutionContext } from "./workers.js";

/**
 * The Cron Trigger's tick: a Neon Pool (one WebSocket carries every statement),
 * the budget from the Workers limit minus the margin, kept alive with
 * `ctx.waitUntil` until the last running job is requeued and the pool closed.
 * A failure rejects, so the Cron Trigger's log shows it.
 */
export const scheduledTick = (env: Env, ctx: WorkerExecutionContext, jobs: (db: Db, settings: JobsSettings) => Ticker): Promise<TickReport> => {
  const done = runPlatformTick({ env, platform: WORKERS_SCHEDULED, connect: neonPool, jobs });
  ctx.waitUntil(done);
  return done;
};

import type { Env, JobsSettings } from "../settings/library.js";
import type { Db } from "../db.js";
import type { TickReport } from "../tick/types.js";
import { kickBudgetMs, type PlatformLimit, platformSettings } from "./budget.js";
import type { Connection } from "./connection.js";

/** Something that can run a tick: what `createJobs` returns, narrowed to what a platform entrypoint calls. */
export interface Ticker {
  tick(options?: { budgetMs?: number; signal?: AbortSignal }): Promise<TickReport>;
}

export interface PlatformTick {
  readonly env: Env;
  readonly platform: PlatformLimit;
  /** Opens the invocation's database connection (closed before `runPlatformTick` returns). */
  readonly connect: (env: Env) => Connection;
  /** Builds the deployment's jobs on that connection. */
  readonly jobs: (db: Db, settings: JobsSettings) => Ticker;
}

/**
 * One tick on a platform: settings from the environment, the budget from the
 * platform's limit minus the margin (or the shorter kick budget), and the
 * connection closed before it returns, whatever happens.
 */
export const runPlatformTick = async (p: PlatformTick, options: { kick?: boolean; signal?: AbortSignal } = {}): Promise<TickReport> => {
  const settings = platformSettings(p.env, p.platform);
  const budgetMs = options.kick ? kickBudgetMs(p.env, settings.tickBudgetMs) : settings.tickBudgetMs;
  const connection = p.connect(p.env);
  try {
    return await p.jobs(connection.db, settings).tick({ budgetMs, signal: options.signal });
  } finally {
    await connection.close();
  }
};

/** The header a kick adds to its tick request, asking for the short kick budget. */
export const KICK_HEADER = "x-jobs-kick";

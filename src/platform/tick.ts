import type { Env, JobsSettings } from "../config.js";
import type { Db } from "../db.js";
import { isJobsError } from "../errors.js";
import type { TickReport } from "../tick.js";
import { budgetFromLimit, kickBudgetMs, limitFromEnv, type PlatformLimit, platformSettings } from "./budget.js";
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

/** The budget a platform's tick would get with this environment (for logs and tests). */
export const platformBudgetMs = (env: Env, platform: PlatformLimit): number => budgetFromLimit(limitFromEnv(env, platform));

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });

/** Compares in time independent of where the strings differ, so the secret cannot be guessed byte by byte. */
const sameSecret = (a: string, b: string): boolean => {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
};

/** The header a kick adds to its tick request, asking for the short kick budget. */
export const KICK_HEADER = "x-jobs-kick";

/**
 * The tick as an HTTP endpoint (Vercel Cron calls it with
 * `Authorization: Bearer $CRON_SECRET`). Refuses every request while
 * CRON_SECRET is unset, so a deployment without it cannot be ticked by anyone.
 */
export const handleTickRequest = async (request: Request, p: PlatformTick): Promise<Response> => {
  const secret = p.env.CRON_SECRET;
  if (!secret) {
    return json(401, { error: { code: "unauthorized", message: "CRON_SECRET is not set on this deployment, so the tick endpoint refuses every request" } });
  }
  if (!sameSecret(request.headers.get("authorization") ?? "", `Bearer ${secret}`)) {
    return json(401, { error: { code: "unauthorized", message: "missing or wrong Authorization: Bearer <CRON_SECRET>" } });
  }
  try {
    const report = await runPlatformTick(p, { kick: request.headers.get(KICK_HEADER) === "1", signal: request.signal });
    return json(200, report);
  } catch (error) {
    if (isJobsError(error)) return json(500, { error: { code: error.code, message: error.message } });
    // Not the client's fault (the database is unreachable, say): the platform's logs get the details.
    console.error(JSON.stringify({ level: "error", msg: "tick failed", error: error instanceof Error ? error.message : String(error) }));
    return json(503, { error: { code: "tick_failed", message: "the tick could not run; see the function's logs" } });
  }
};

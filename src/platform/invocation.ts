import { errorText } from "../error-text.js";
import { type JobsModule, jobsFromModule } from "../module/jobs-module.js";
import { settingsFromEnv } from "../settings/library.js";
import type { Env } from "../settings/parse.js";
import { wakeLiveTicks } from "../tick/live.js";
import type { Handoff, TickReport } from "../tick/types.js";
import { invocationGraceMs, kickBudgetMs, type PlatformLimit, platformSettings } from "./budget.js";
import type { Connection } from "./connection.js";
import type { TickRequest } from "../http/tick-request.js";

/** A deployment of a jobs module on a platform: what every invocation there shares. */
export interface Deployment {
  readonly module: JobsModule;
  readonly env: Env;
  /** The limit of this invocation (Vercel knows each invocation's deadline). */
  readonly platform: () => PlatformLimit;
  /** Opens the tick's connection (closed before the tick's promise settles). */
  readonly connect: (env: Env) => Connection;
}

/**
 * One tick invocation: settings from the environment, the budget from the
 * platform's limit minus the margin (or the kick budget), part of the margin as
 * the statements' grace, the slot handed to it, and `spawn` to start more ticks
 * as invocations of their own. The connection is closed before it returns.
 */
export const runInvocationTick = async (
  d: Deployment,
  req: TickRequest,
  options: { readonly spawn?: (handoffs: readonly Handoff[]) => void; readonly signal?: AbortSignal } = {},
): Promise<TickReport> => {
  const limit = d.platform();
  const settings = platformSettings(d.env, limit, d.module.settings);
  // A kick claims for its own short budget; what it started runs to the tick's budget.
  const claimForMs = req.kick ? kickBudgetMs(d.env, settings.tickBudgetMs) : undefined;
  const graceMs = invocationGraceMs(d.env, limit, settings.graceMs);
  const connection = d.connect(d.env);
  try {
    const jobs = jobsFromModule(d.module, { db: connection.db, settings });
    return await jobs.tick({ budgetMs: settings.tickBudgetMs, claimForMs, graceMs, handoff: req.handoff, signal: options.signal, spawn: options.spawn });
  } finally {
    await closeWithin(connection, Math.min(graceMs, MAX_CLOSE_MS));
  }
};

/** The longest an invocation waits for its pool to close before it answers anyway. */
const MAX_CLOSE_MS = 2_000;

/**
 * Closes the connection, waiting at most `ms`: a pool waits for the connections it is still opening,
 * and a database that took the connection but never answers held every invocation (the cron's and
 * each kick) until the platform killed it, well past its limit. The statement bound plus this stays
 * within the safety margin (the grace is at most half of it); the pool's connect timeout ends the rest.
 */
const closeWithin = async (connection: Connection, ms: number): Promise<void> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([connection.close(), waited]).finally(() => clearTimeout(timer));
};

/** The ticks of this deployment running in this isolate, woken to claim what just became due; true when one has room. */
export const wakeDeployment = (d: Deployment): boolean => wakeLiveTicks(settingsFromEnv(d.env, d.module.settings).tablePrefix);

/** Logs a tick invocation that failed to start (a kick, or an extra tick, whose reserved slot the asking tick frees). */
export const logSpawnError = (error: unknown): void =>
  console.warn(JSON.stringify({ time: new Date().toISOString(), level: "warn", msg: "starting a tick failed", error: errorText(error) }));

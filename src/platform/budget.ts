import { read } from "../settings/catalog.js";
import { type Env, type JobsSettings, type JobsSettingsInput, settingsFromEnv } from "../settings/library.js";
import { JobsError } from "../errors.js";

/**
 * What one platform invocation may last, and how much of it a tick keeps in
 * reserve for the final requeue statement, closing the pool and the response.
 */
export interface PlatformLimit {
  /** Wall-clock limit of one invocation. */
  readonly limitMs: number;
  /** Kept back from the limit: the tick's budget is `limitMs - marginMs`. */
  readonly marginMs: number;
  /** This invocation's real limit, when the platform says (Vercel's getDeadline): JOBS_PLATFORM_LIMIT may only lower it. */
  readonly hardLimitMs?: number;
}

/** `maxDuration` of the tick function in vercel.json, in seconds (a test checks the two agree). */
export const VERCEL_TICK_MAX_DURATION_S = 60;

export const VERCEL_TICK: PlatformLimit = { limitMs: VERCEL_TICK_MAX_DURATION_S * 1_000, marginMs: 10_000 };

/**
 * A Cron Trigger that fires every minute: Cloudflare allows 30 s of CPU by
 * default and the next trigger comes 60 s later, so 30 s of wall time is the
 * safe assumption for an I/O-bound tick (raise it with JOBS_PLATFORM_LIMIT).
 */
export const WORKERS_SCHEDULED: PlatformLimit = { limitMs: 30_000, marginMs: 5_000 };

/** A tick started by an enqueue (the kick): short, so it never holds the request's isolate for long. */
export const KICK_BUDGET_MS = 10_000;


const MIN_BUDGET_MS = 1_000;
/** The final requeue, closing the pool and answering need some time: a margin below this is refused. */
const MIN_MARGIN_MS = 1_000;

/** The platform limit as configured: the defaults of `platform`, overridden by JOBS_PLATFORM_LIMIT and JOBS_SAFETY_MARGIN. */
const limitFromEnv = (env: Env, platform: PlatformLimit): PlatformLimit => ({
  limitMs: Math.min(read(env, "JOBS_PLATFORM_LIMIT") ?? platform.limitMs, platform.hardLimitMs ?? Number.POSITIVE_INFINITY),
  marginMs: read(env, "JOBS_SAFETY_MARGIN") ?? platform.marginMs,
});

/** The tick's budget: the limit minus the margin. Throws `invalid_config` when nothing useful is left. */
export const budgetFromLimit = ({ limitMs, marginMs }: PlatformLimit): number => {
  if (marginMs < MIN_MARGIN_MS) {
    throw new JobsError("invalid_config", `JOBS_SAFETY_MARGIN must be at least ${MIN_MARGIN_MS} ms: the tick needs it to requeue what is still running`, {
      setting: "JOBS_SAFETY_MARGIN",
    });
  }
  const budget = limitMs - marginMs;
  if (budget < MIN_BUDGET_MS) {
    throw new JobsError(
      "invalid_config",
      `the platform limit (${limitMs} ms) minus the safety margin (${marginMs} ms) leaves ${budget} ms; a tick needs at least ${MIN_BUDGET_MS} ms`,
      { setting: "JOBS_SAFETY_MARGIN", limitMs, marginMs },
    );
  }
  return budget;
};

/**
 * Settings for a tick on a platform: everything from the environment, with the
 * tick budget derived from the platform limit. JOBS_TICK_BUDGET may lower the
 * budget but never raise it past the limit minus the margin, since a tick the
 * platform kills leaves its jobs leased until the lease expires.
 */
export const platformSettings = (env: Env, platform: PlatformLimit, overrides: JobsSettingsInput = {}): JobsSettings => {
  const ceiling = budgetFromLimit(limitFromEnv(env, platform));
  const settings = settingsFromEnv(env, overrides);
  const explicit = overrides.tickBudgetMs !== undefined || read(env, "JOBS_TICK_BUDGET") !== undefined;
  // As for a budget the limit leaves: a shorter one cuts every run short (JOBS_TICK_BUDGET=60, read as 60 ms,
  // requeued a 300 ms job at every tick until it was dead-lettered).
  if (explicit && settings.tickBudgetMs < MIN_BUDGET_MS) {
    throw new JobsError("invalid_config", `JOBS_TICK_BUDGET must be at least ${MIN_BUDGET_MS} ms on a platform, got ${settings.tickBudgetMs} ms (a plain number is milliseconds: write 60s for a minute)`, {
      setting: "JOBS_TICK_BUDGET",
    });
  }
  // The claim cutoff is clamped to half the budget where every tick's limits are decided (tickLimits).
  return { ...settings, tickBudgetMs: explicit ? Math.min(settings.tickBudgetMs, ceiling) : ceiling };
};

/**
 * The statements' grace past the tick's deadline on a platform: half the safety margin as configured
 * (JOBS_SAFETY_MARGIN, else the platform's), never more than JOBS_TICK_GRACE, so that the final
 * requeue, a late result, closing the pool and answering all fit in the margin.
 */
export const invocationGraceMs = (env: Env, platform: PlatformLimit, graceMs: number): number =>
  Math.min(graceMs, Math.max(500, limitFromEnv(env, platform).marginMs / 2));

/** The kick's budget: JOBS_KICK_BUDGET (default 10 s), never more than the platform's own budget. */
export const kickBudgetMs = (env: Env, ceilingMs: number): number => Math.min(read(env, "JOBS_KICK_BUDGET") ?? KICK_BUDGET_MS, ceilingMs);

/** JOBS_KICK=off (or 0, false, no) turns the low-latency kick off; it is on by default. */
export const kickEnabled = (env: Env): boolean => read(env, "JOBS_KICK") ?? true;

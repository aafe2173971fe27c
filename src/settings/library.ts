import { JobsError } from "../errors.js";
import type { VarName } from "./catalog.js";
import { DEFAULT_HISTORY_RETENTION_MS, MAX_ATTEMPTS, MAX_CONCURRENCY, MIN_GRACE_MS } from "../terms.js";

export { MAX_CONCURRENCY } from "../terms.js";

/**
 * The highest payload limit: PostgreSQL's jsonb of a large array of small numbers is about six times
 * its text, and one value must stay under 1 GB (a 46 MB array of zeros failed to store, 24 MB did).
 */
const MAX_PAYLOAD_LIMIT = 16 * 1024 * 1024;
import { bad, durationSetting, type Env, positiveInt, retentionSetting } from "./parse.js";

export { durationSetting, type Env } from "./parse.js";

/** Everything a tick and the store need to know, resolved and validated. */
export interface JobsSettings {
  /** Handlers running at once in one tick. */
  readonly concurrency: number;
  /** Rows per claim statement; never more than the free concurrency. Unset: the concurrency (all the free slots). */
  readonly batchSize?: number;
  /** Minimum lease a claim takes; a claim's lease always covers the rest of the tick budget plus `leaseMarginMs`. */
  readonly leaseMs: number;
  readonly leaseMarginMs: number;
  /** How long one tick may run handlers; keep it below the platform's execution limit. */
  readonly tickBudgetMs: number;
  /** A tick stops claiming this long before its deadline, so new runs are not started only to be requeued. */
  readonly claimCutoffMs: number;
  /** Prefix of every table name; lets several queues share one database. */
  readonly tablePrefix: string;
  /** Largest payload accepted, in bytes of JSON. */
  readonly maxPayloadBytes: number;
  /** Defaults for jobs that do not say. */
  readonly defaultMaxAttempts: number;
  /** Ticks running at once across the whole deployment (each holds one connection). */
  readonly maxTicks: number;
  /** How long past its deadline a tick may take to settle and requeue; every statement is bounded by the time left plus this. */
  readonly graceMs: number;
  /** While a tick has free slots but found the queue empty, it claims again this often (work enqueued elsewhere). */
  readonly claimIntervalMs: number;
  /** How long run history is kept; `false`: none is recorded (old rows are still cleaned up). */
  readonly historyRetentionMs: number | false;
  /** How long per-minute metrics and queue depths are kept. */
  readonly metricsRetentionMs: number;
  /** How long dead letters are kept; `false`: until replayed or discarded. */
  readonly deadLetterRetentionMs: number | false;
  /** Largest handler return value (bytes of JSON) recorded in the history. */
  readonly maxOutputBytes: number;
}

/** Settings in code: any of them, each left out or `undefined` for its default. */
export type JobsSettingsInput = { readonly [K in keyof JobsSettings]?: JobsSettings[K] | undefined };

export const DEFAULT_SETTINGS: JobsSettings = {
  concurrency: 10,
  leaseMs: 60_000,
  leaseMarginMs: 15_000,
  tickBudgetMs: 50_000,
  claimCutoffMs: 5_000,
  tablePrefix: "jobs_",
  maxPayloadBytes: 1_048_576,
  defaultMaxAttempts: 5,
  maxTicks: 4,
  graceMs: 5_000,
  claimIntervalMs: 1_000,
  historyRetentionMs: DEFAULT_HISTORY_RETENTION_MS,
  metricsRetentionMs: 30 * 86_400_000,
  deadLetterRetentionMs: false,
  maxOutputBytes: 65_536,
};

/** The most tick slots the schema has (migration 004). */
const MAX_TICK_SLOTS = 256;

const PREFIX = /^[a-z_][a-z0-9_]{0,40}$/;

const duration = (name: string, value: unknown): number => durationSetting(name, value);

/** Merges explicit settings over defaults and checks every value, naming the setting that is wrong. */
export const resolveSettings = (input: JobsSettingsInput = {}, names: Partial<Record<keyof JobsSettings, string>> = {}): JobsSettings => {
  const merged = { ...DEFAULT_SETTINGS, ...stripUndefined(input) };
  const n = (k: keyof JobsSettings) => names[k] ?? k;
  // A claim's LIMIT and the tick's counters are PostgreSQL integers; no tick runs more handlers than this.
  const concurrency = positiveInt(n("concurrency"), merged.concurrency, 1, MAX_CONCURRENCY);
  const batchSize = input.batchSize === undefined ? undefined : positiveInt(n("batchSize"), input.batchSize);
  const tablePrefix = String(merged.tablePrefix);
  if (!PREFIX.test(tablePrefix)) bad(n("tablePrefix"), "at most 41 lower-case letters, digits and underscores, starting with a letter or underscore", tablePrefix);
  const settings: JobsSettings = {
    concurrency,
    batchSize,
    leaseMs: duration(n("leaseMs"), merged.leaseMs),
    leaseMarginMs: duration(n("leaseMarginMs"), merged.leaseMarginMs),
    tickBudgetMs: duration(n("tickBudgetMs"), merged.tickBudgetMs),
    claimCutoffMs: duration(n("claimCutoffMs"), merged.claimCutoffMs),
    tablePrefix,
    maxPayloadBytes: positiveInt(n("maxPayloadBytes"), merged.maxPayloadBytes, 1, MAX_PAYLOAD_LIMIT),
    // A job's maxAttempts is at most MAX_ATTEMPTS; a default above it would fail every enqueue of a job without its own.
    defaultMaxAttempts: positiveInt(n("defaultMaxAttempts"), merged.defaultMaxAttempts, 1, MAX_ATTEMPTS),
    maxTicks: positiveInt(n("maxTicks"), merged.maxTicks),
    graceMs: duration(n("graceMs"), merged.graceMs),
    claimIntervalMs: durationSetting(n("claimIntervalMs"), merged.claimIntervalMs, 10),
    historyRetentionMs: retentionSetting(n("historyRetentionMs"), merged.historyRetentionMs, "off"),
    metricsRetentionMs: retentionSetting(n("metricsRetentionMs"), merged.metricsRetentionMs) as number,
    deadLetterRetentionMs: retentionSetting(n("deadLetterRetentionMs"), merged.deadLetterRetentionMs, "keep"),
    maxOutputBytes: positiveInt(n("maxOutputBytes"), merged.maxOutputBytes),
  };
  if (settings.maxTicks > MAX_TICK_SLOTS) bad(n("maxTicks"), `at most ${MAX_TICK_SLOTS}`, merged.maxTicks);
  if (settings.tickBudgetMs < 1) bad(n("tickBudgetMs"), "longer than 0", input.tickBudgetMs);
  // A few milliseconds leave the tick's final statement no time to requeue what runs (its jobs stayed running until their
  // leases ran out); 0 gives each statement the floor of a second. A plain number is milliseconds: 5 is 5 ms, not 5 s.
  if (settings.graceMs > 0 && settings.graceMs < MIN_GRACE_MS) bad(n("graceMs"), `0 or at least ${MIN_GRACE_MS} ms (a plain number is milliseconds: write 5s for five seconds)`, merged.graceMs);
  // A misspelt setting (concurency) would otherwise be dropped without a word, as a misspelt option would.
  for (const k of Object.keys(input)) if (!(k in ENV_NAMES)) throw new JobsError("invalid_config", `${k} is no setting pgtick knows`, { setting: k });
  return settings;
};

/** The environment variable behind each setting. */
export const ENV_NAMES = {
  concurrency: "JOBS_CONCURRENCY",
  batchSize: "JOBS_BATCH_SIZE",
  leaseMs: "JOBS_LEASE",
  leaseMarginMs: "JOBS_LEASE_MARGIN",
  tickBudgetMs: "JOBS_TICK_BUDGET",
  claimCutoffMs: "JOBS_CLAIM_CUTOFF",
  tablePrefix: "JOBS_TABLE_PREFIX",
  maxPayloadBytes: "JOBS_MAX_PAYLOAD_BYTES",
  defaultMaxAttempts: "JOBS_MAX_ATTEMPTS",
  maxTicks: "JOBS_MAX_TICKS",
  graceMs: "JOBS_TICK_GRACE",
  claimIntervalMs: "JOBS_CLAIM_INTERVAL",
  historyRetentionMs: "JOBS_HISTORY_RETENTION",
  metricsRetentionMs: "JOBS_METRICS_RETENTION",
  deadLetterRetentionMs: "JOBS_DEAD_LETTER_RETENTION",
  maxOutputBytes: "JOBS_MAX_OUTPUT_BYTES",
} as const satisfies Record<keyof JobsSettings, VarName>;


/**
 * Reads the settings from environment variables (unset ones keep their defaults),
 * with `overrides` from code taking precedence. Throws `invalid_config` naming the variable.
 */
export const settingsFromEnv = (env: Env, overrides: JobsSettingsInput = {}): JobsSettings => {
  const fromEnv: Record<string, string> = {};
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    // Trimmed, and blank is unset, as every other variable is read (JOBS_CONCURRENCY=" " was refused, "q_\n" too).
    const value = env[name]?.trim();
    if (value !== undefined && value !== "") fromEnv[key] = value;
  }
  const fromCode = stripUndefined(overrides);
  // A bad value is named where it came from: the variable, or the setting in code that took precedence.
  const names = Object.fromEntries(Object.keys(fromEnv).filter((k) => !(k in fromCode)).map((k) => [k, ENV_NAMES[k as keyof JobsSettings]]));
  return resolveSettings({ ...(fromEnv as JobsSettingsInput), ...fromCode }, names);
};

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

import { JobsError } from "../errors.js";
import { commaList, durationSetting, type Env, onOff, oneOf, positiveInt, retentionSetting } from "./parse.js";

/**
 * Every environment variable a deployment reads, once: its group and its type (the
 * parser, which names the variable in its error); those only `npm run dev` and the CLI
 * read are in dev-catalog.ts, kept out of deployed bundles. The readers are the only
 * places a variable is read. Its default as the README shows it and what it means
 * are in catalog-docs.ts (also kept out), from which the README's settings tables are
 * rendered (`npm run gen:readme`); a test keeps them the same.
 */
export type Group = "library" | "database" | "http" | "platform" | "dashboard" | "dev";

export interface Var<T> {
  readonly group: Group;
  readonly parse: (name: string, raw: string) => T;
}

export const text = (_name: string, raw: string) => raw;
/** A URL of one of `protocols`: anything else is refused naming the variable, not met later as "Invalid URL". */
const url = (protocols: readonly string[], what: string) => (name: string, raw: string) => {
  let protocol = "";
  // A socket's URL names no host (postgres://user@/db?host=/var/run/postgresql), which libpq and pg take.
  for (const candidate of [raw, raw.replace("@/", "@localhost/")]) {
    try {
      protocol ||= new URL(candidate).protocol;
    } catch {
      // Not a URL at all.
    }
  }
  if (!protocols.includes(protocol)) throw new JobsError("invalid_config", `${name} must be ${what}`, { setting: name });
  return raw;
};
const databaseUrl = url(["postgres:", "postgresql:"], "a postgres:// connection URL such as postgres://user:password@host:5432/database");
/** Where ticks are posted: a bad one would reserve fan-out slots for ticks that never start. */
const tickUrl = (name: string, raw: string) => {
  const what = "an https:// URL of the tick endpoint such as https://my-app.example.com/api/tick";
  url(["https:", "http:"], what)(name, raw);
  const u = new URL(raw);
  // A bare domain (the production domain, as asked for) posted every kick to `/`: 404, and no tick ever started.
  if (u.pathname === "/") throw new JobsError("invalid_config", `${name} must be ${what}, with its path (a bare domain posts to /)`, { setting: name });
  // fetch refuses such a URL, and its error, logged at every start, repeated the password.
  if (u.username || u.password) throw new JobsError("invalid_config", `${name} must hold no password`, { setting: name });
  return raw;
};
const count = (name: string, raw: string) => positiveInt(name, raw);
const duration = (min = 0) => (name: string, raw: string) => durationSetting(name, raw, min);
export const v = <T>(group: Group, parse: (name: string, raw: string) => T): Var<T> => ({ group, parse });

export const VARS = {
  JOBS_CONCURRENCY: v("library", count),
  JOBS_BATCH_SIZE: v("library", count),
  JOBS_TICK_BUDGET: v("library", duration(1)),
  JOBS_CLAIM_CUTOFF: v("library", duration()),
  JOBS_TICK_GRACE: v("library", duration()),
  JOBS_LEASE: v("library", duration()),
  JOBS_LEASE_MARGIN: v("library", duration()),
  JOBS_MAX_TICKS: v("library", count),
  JOBS_CLAIM_INTERVAL: v("library", duration(10)),
  JOBS_TABLE_PREFIX: v("library", text),
  JOBS_MAX_PAYLOAD_BYTES: v("library", count),
  JOBS_MAX_ATTEMPTS: v("library", count),
  JOBS_HISTORY_RETENTION: v("library", (n, raw) => retentionSetting(n, raw, "off")),
  JOBS_METRICS_RETENTION: v("library", (n, raw) => retentionSetting(n, raw)),
  JOBS_DEAD_LETTER_RETENTION: v("library", (n, raw) => retentionSetting(n, raw, "keep")),
  JOBS_MAX_OUTPUT_BYTES: v("library", count),

  DATABASE_URL: v("database", databaseUrl),

  JOBS_API_TOKEN: v("http", text),
  CRON_SECRET: v("http", text),
  JOBS_MAX_BODY_BYTES: v("http", count),

  JOBS_PLATFORM_LIMIT: v("platform", duration()),
  JOBS_SAFETY_MARGIN: v("platform", duration()),
  JOBS_KICK: v("platform", (n, raw) => onOff(n, raw)),
  JOBS_KICK_BUDGET: v("platform", duration(1)),
  JOBS_KICK_URL: v("platform", tickUrl),
  JOBS_NEON_TRANSPORT: v("platform", oneOf("http", "ws")),
  NEON_LOCAL_WSPROXY: v("platform", text),
  NEON_LOCAL_HTTP: v("platform", text),
  VERCEL_URL: v("platform", text),
  VERCEL: v("platform", text),

  DASHBOARD_PASSWORD: v("dashboard", text),
  DASHBOARD_SECRET: v("dashboard", text),
  DASHBOARD_SESSION_TTL: v("dashboard", duration(60_000)),
  DASHBOARD_ORIGINS: v("dashboard", commaList),
  DASHBOARD_CLIENT_IP_HEADER: v("dashboard", text),
} as const satisfies Record<string, Var<unknown>>;

export type Catalog = Readonly<Record<string, Var<unknown>>>;
export type VarName = keyof typeof VARS;

/** A reader of `catalog`: the variable's value, parsed and checked (`invalid_config` naming it); undefined when unset or empty. */
export const reader =
  <C extends Catalog>(catalog: C) =>
  <N extends keyof C & string>(env: Env, name: N): ReturnType<C[N]["parse"]> | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === "" ? undefined : (catalog[name]!.parse(name, raw) as ReturnType<C[N]["parse"]>);
  };

export const read = reader(VARS);

/** Parses every variable of `catalog` that is set, so a bad value fails at start (`invalid_config` naming it), not at first use. */
export const checkEnv = (env: Env, catalog: Catalog = VARS): void => {
  const get = reader(catalog);
  for (const name of Object.keys(catalog)) get(env, name);
};

/** Variables set that look like this project's (JOBS_, DASHBOARD_, DEV_) but are none of `known`: most likely misspelt. */
export const unknownVariables = (env: Env, known: Catalog = VARS): string[] =>
  Object.keys(env).filter((name) => /^(JOBS|DASHBOARD|DEV)_/.test(name) && !(name in known) && (env[name] ?? "").trim() !== "").sort();

import { checkEnv, unknownVariables } from "../src/settings/catalog.js";
import { EVERY_VAR } from "../src/settings/dev-catalog.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, isJobsError, parseDuration, resolveSettings, settingsFromEnv } from "../src/index.js";
import { read } from "../src/settings/catalog.js";

describe("settings", () => {
  it("parses durations as 30s, 2m, 1h, 250ms or plain milliseconds", () => {
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("2m")).toBe(120_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("1500")).toBe(1_500);
    expect(parseDuration("1.5s")).toBe(1_500);
    expect(parseDuration("soon")).toBeUndefined();
    expect(parseDuration("-1s")).toBeUndefined();
  });

  it("reads the environment, with code overrides winning", () => {
    const s = settingsFromEnv(
      { JOBS_CONCURRENCY: "32", JOBS_BATCH_SIZE: "8", JOBS_LEASE: "2m", JOBS_TICK_BUDGET: "45s", JOBS_TABLE_PREFIX: "q_", JOBS_CLAIM_CUTOFF: "3s" },
      { tickBudgetMs: 20_000 },
    );
    expect(s).toMatchObject({ concurrency: 32, batchSize: 8, leaseMs: 120_000, tickBudgetMs: 20_000, tablePrefix: "q_", claimCutoffMs: 3_000 });
  });

  it("names a bad value where it came from: the setting in code that took precedence, not the variable", () => {
    for (const env of [{}, { JOBS_CONCURRENCY: "5" }]) {
      expect(() => settingsFromEnv(env, { concurrency: 0 })).toThrow(/^concurrency must be/);
    }
    expect(() => settingsFromEnv({ JOBS_CONCURRENCY: "0" }, { leaseMs: 60_000 })).toThrow(/^JOBS_CONCURRENCY must be/);
    // A NaN is named as such (it read "got null").
    expect(() => settingsFromEnv({}, { concurrency: Number.NaN })).toThrow(/^concurrency must be an integer from 1 to 10000, got NaN$/);
    // A socket's URL names no host, as libpq and pg take it (it was "must be a postgres:// connection URL").
    expect(read({ DATABASE_URL: "postgres://app@/jobs?host=/var/run/postgresql" }, "DATABASE_URL")).toBe("postgres://app@/jobs?host=/var/run/postgresql");
    expect(() => read({ DATABASE_URL: "postgres//nope" }, "DATABASE_URL")).toThrow(/DATABASE_URL must be a postgres:\/\/ connection URL/);
  });

  it("refuses a setting in code it does not know (a misspelt one was dropped without a word)", () => {
    for (const input of [{ concurency: 50 }, { tablePrefx: "app_" }]) {
      expect(() => settingsFromEnv({}, input as never)).toThrow(new RegExp(`^${Object.keys(input)[0]} is no setting pgtick knows`));
    }
    expect(() => createJobs({ db: { query: async () => ({ rows: [], rowCount: 0 }) }, jobs: [], settings: { concurency: 5 } as never })).toThrow(/concurency is no setting/);
  });

  it("reads counts as decimal digits only: hex and exponents are refused, not read as 16 and 100", () => {
    for (const v of ["0x10", "1e2", "1.0", "12abc"]) expect(() => settingsFromEnv({ JOBS_MAX_TICKS: v })).toThrow(/^JOBS_MAX_TICKS must be/);
    expect(settingsFromEnv({ JOBS_MAX_TICKS: " 8 " }).maxTicks).toBe(8);
  });

  it("bounds the payload limit at 16 MiB: PostgreSQL's jsonb of a large array of small numbers is about six times its text, and one value must stay under 1 GB", () => {
    expect(settingsFromEnv({ JOBS_MAX_PAYLOAD_BYTES: String(16 * 1024 * 1024) }).maxPayloadBytes).toBe(16 * 1024 * 1024);
    expect(() => settingsFromEnv({ JOBS_MAX_PAYLOAD_BYTES: String(16 * 1024 * 1024 + 1) })).toThrow(/^JOBS_MAX_PAYLOAD_BYTES must be .*16777216/);
    expect(() => resolveSettings({ maxPayloadBytes: 64 * 1024 * 1024 })).toThrow(/^maxPayloadBytes must be/);
  });

  it("reads the library's variables as every other: trimmed, and blank as unset (a blank JOBS_CONCURRENCY was refused)", () => {
    expect(settingsFromEnv({ JOBS_CONCURRENCY: " ", JOBS_TABLE_PREFIX: "q_\n", JOBS_TICK_BUDGET: " 45s " })).toMatchObject({ concurrency: 10, tablePrefix: "q_", tickBudgetMs: 45_000 });
  });

  it("defaults the claim batch to the concurrency", () => {
    expect(settingsFromEnv({}).batchSize).toBeUndefined();
    expect(resolveSettings({}).concurrency).toBe(10);
  });

  it.each([
    [{ JOBS_CONCURRENCY: "zero" }, "JOBS_CONCURRENCY"],
    [{ JOBS_CONCURRENCY: "0" }, "JOBS_CONCURRENCY"],
    [{ JOBS_LEASE: "forever" }, "JOBS_LEASE"],
    [{ JOBS_TICK_BUDGET: "10 minutes" }, "JOBS_TICK_BUDGET"],
    [{ JOBS_TABLE_PREFIX: "drop table;" }, "JOBS_TABLE_PREFIX"],
    [{ JOBS_TABLE_PREFIX: "a".repeat(42) }, "JOBS_TABLE_PREFIX must be at most 41"],
    [{ JOBS_BATCH_SIZE: "1.5" }, "JOBS_BATCH_SIZE"],
    // Past what a timer can wait: a tick would end at once instead of never.
    [{ JOBS_TICK_BUDGET: "600h" }, "JOBS_TICK_BUDGET"],
    // A few milliseconds of grace left the final statement no time (5 read as 5 ms, not 5 s); 0 gives the floor of a second.
    [{ JOBS_TICK_GRACE: "5" }, "JOBS_TICK_GRACE"],
    [{ JOBS_TICK_GRACE: "99ms" }, "JOBS_TICK_GRACE"],
    // Above a job's own bound (1,000): every enqueue of a job without its own maxAttempts would fail.
    [{ JOBS_MAX_ATTEMPTS: "5000" }, "JOBS_MAX_ATTEMPTS"],
    // Past a PostgreSQL integer: the tick's claim failed on it.
    [{ JOBS_CONCURRENCY: "3000000000" }, "JOBS_CONCURRENCY"],
  ])("rejects %o with an error naming %s", (env, name) => {
    try {
      settingsFromEnv(env);
      expect.unreachable();
    } catch (e) {
      expect(isJobsError(e) && e.code).toBe("invalid_config");
      expect((e as Error).message).toContain(name);
    }
  });
});

describe("defineJob", () => {
  it.each([
    [{ maxAttempts: 0 }, "maxAttempts"],
    [{ maxAttempts: 5_000 }, "maxAttempts"],
    [{ priority: 1.5 }, "priority"],
    [{ timeoutMs: Number.NaN }, "timeoutMs"],
    // A timer this long would fire at once: every run would time out after 1 ms.
    [{ timeoutMs: 30 * 24 * 3_600_000 }, "timeoutMs"],
    [{ backoff: { maxMs: 1e16 } }, "backoff.maxMs"],
    [{ backoff: { baseMs: -1 } }, "backoff.baseMs"],
    [{ backoff: { factor: Number.POSITIVE_INFINITY } }, "backoff.factor"],
    // What TypeScript catches, for plain JavaScript: each failed every run instead.
    [{ handler: undefined }, "handler must be a function"],
    [{ schema: { parse: () => ({}) } }, "schema must be a zod schema"],
    [{ output: {} }, "output must be a zod schema"],
  ])("refuses %o at definition time, naming %s", (options, field) => {
    expect(() => defineJob({ name: "x", schema: z.object({}), handler: () => {}, ...(options as object) })).toThrow(field);
  });

  it("refuses control characters and surrounding spaces in names", () => {
    expect(() => defineJob({ name: " padded", schema: z.object({}), handler: () => {} })).toThrow("job name");
    expect(() => defineJob({ name: "a\nb", schema: z.object({}), handler: () => {} })).toThrow("job name");
    expect(defineJob({ name: "ns:send/email v2 ✉", schema: z.object({}), handler: () => {} }).name).toBe("ns:send/email v2 ✉");
  });
});

describe("variables read outside the library's settings", () => {
  it.each([
    [{ DATABASE_URL: "postgres://postgres@127.0.0.1:notaport/x" }, "DATABASE_URL"],
    [{ DATABASE_URL: "garbage" }, "DATABASE_URL"],
    [{ JOBS_KICK_BUDGET: "0" }, "JOBS_KICK_BUDGET"],
    [{ JOBS_KICK: "maybe" }, "JOBS_KICK"],
    // No scheme: every kick and fan-out would fail, the fan-out's slots reserved for ticks that never start.
    [{ JOBS_KICK_URL: "my-app.example.com/api/tick" }, "JOBS_KICK_URL"],
    [{ JOBS_KICK_URL: "ftp://my-app.example.com/api/tick" }, "JOBS_KICK_URL"],
    // The production domain alone: every kick was posted to / (404), and no tick started.
    [{ JOBS_KICK_URL: "https://my-app.example.com" }, "JOBS_KICK_URL"],
    [{ JOBS_KICK_URL: "https://my-app.example.com/" }, "JOBS_KICK_URL"],
    // fetch refuses a URL with credentials, and its error, logged at every start, repeated the password.
    [{ JOBS_KICK_URL: "https://u:kickpass@my-app.example.com/api/tick" }, "JOBS_KICK_URL must hold no password"],
    // PostgreSQL refuses it, once started: "outside the valid range".
    [{ DEV_PG_PORT: "0" }, "DEV_PG_PORT"],
  ])("checkEnv refuses %o at start, naming %s", (env, name) => {
    expect(() => checkEnv(env, EVERY_VAR)).toThrow(name);
  });

  it("a deployment does not parse what only npm run dev and the CLI read", () => {
    expect(() => checkEnv({ DEV_PG_PORT: "0", PORT: "x", LOG_LEVEL: "loud" })).not.toThrow();
    expect(() => checkEnv({ PORT: "x" }, EVERY_VAR)).toThrow("PORT");
  });

  it("takes good values", () => {
    expect(() => checkEnv({ DATABASE_URL: "postgresql://u:p@db.example.com:5432/app?sslmode=require", JOBS_KICK: "off", JOBS_KICK_BUDGET: "5s", JOBS_KICK_URL: "https://jobs.example.com/api/tick" })).not.toThrow();
  });
});

describe("variables that look like settings but are none", () => {
  it("are named, so that npm run dev can warn that a misspelt one does not apply", () => {
    const env = { JOBS_CONCURENCY: "20", JOBS_CONCURRENCY: "5", DASHBOARD_PASSWORD: "x", DEV_SEEDS: "off", DEV_SEED: "off", JOBS_MODULE: "jobs.ts", HOME: "/root", JOBS_EMPTY: " " };
    expect(unknownVariables(env, EVERY_VAR)).toEqual(["DEV_SEEDS", "JOBS_CONCURENCY"]);
    // A deployment reads neither DEV_SEED nor JOBS_MODULE: its warning says so ("no setting a deployment reads").
    expect(unknownVariables(env)).toEqual(["DEV_SEED", "DEV_SEEDS", "JOBS_CONCURENCY", "JOBS_MODULE"]);
  });
});

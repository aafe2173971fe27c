// The operator CLI against a real PostgreSQL: its commands' usage, migrate, enqueue and tick,
// configuration and connection errors, and the real executable (the last tests). The admin
// commands are in cli-admin.test.ts.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, PermanentJobError } from "../src/index.js";
import { EXIT } from "../src/exit-codes.js";
import { migrations } from "../src/migrations.generated.js";
import { freePort } from "./support/postgres.js";
import { cliFixture, expectOneLineError, jobsModule, json, root, type Run } from "./support/cli-fixture.js";
import { folderWithLiveDevServer, isolatedEnv } from "./support/isolated-env.js";

const { h, fresh, withoutModule } = await cliFixture("cli");

describe("help and usage", () => {
  it("lists every command, and each command explains itself", async () => {
    const { cli } = await fresh();
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const c of ["migrate", "tick", "enqueue <job> <json|->", "jobs list", "jobs show <id>", "jobs cancel <id>", "jobs run <id>", "dead-letters list", "dead-letters show <id>", "dead-letters replay", "dead-letters discard", "runs list", "runs show <run id>", "schedules list", "schedules pause <name>", "schedules resume <name>", "schedules run <name>", "stats"]) {
      expect(help.stdout).toContain(c);
    }
    expect(help.stdout).toContain("Exit codes:");
    // The version, alone, as npm's package.json has it, with or without a command.
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    for (const args of [["--version"], ["tick", "--version"]]) {
      const v = await cli(args);
      expect([v.code, v.stdout, v.stderr]).toEqual([0, `pgtick ${version}\n`, ""]);
    }
    const enqueue = await cli(["enqueue", "--help"]);
    expect(enqueue.code).toBe(0);
    expect(enqueue.stdout).toContain("Usage: pgtick enqueue <job> <json|-> [options]");
    expect(enqueue.stdout).toContain("--delay DURATION");
    const group = await cli(["dead-letters", "--help"]);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain("dead-letters replay");
    expect(group.stdout).not.toContain("schedules");
    const replay = await cli(["dead-letters", "replay", "-h"]);
    expect(replay.stdout).toContain("--payload JSON");
  });

  it("refuses a wrong command line with exit code 2 and one line", async () => {
    const { cli } = await fresh();
    const none = await cli([]);
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toContain("Usage: pgtick <command>");
    expectOneLineError(await cli(["launch"]), EXIT.usage, /unknown command "launch"/);
    expectOneLineError(await cli(["dead-letters", "purge"]), EXIT.usage, /unknown dead-letters command "purge"/);
    expectOneLineError(await cli(["stats", "--bogus"]), EXIT.usage, /unknown option --bogus/);
    expectOneLineError(await cli(["stats", "extra"]), EXIT.usage, /unexpected argument "extra"/);
    expectOneLineError(await cli(["enqueue", "send-welcome", "{}", "--priority", "-5"]), EXIT.usage, /option --priority needs a value; a value starting with "-" is written --priority=-5/);
    expectOneLineError(await cli(["dead-letters", "list", "--limit", "0"]), EXIT.rejected, /--limit must be a whole number from 1 to 500/);
    expectOneLineError(await cli(["tick", "--budget", "soon"]), EXIT.rejected, /--budget must be a duration/);
    expectOneLineError(await cli(["tick", "--budget", "0"]), EXIT.rejected, /--budget must be longer than 0/);
    // An option given twice kept its last value without a word; a flag given a value was said to need one.
    expectOneLineError(await cli(["enqueue", "send-welcome", "{}", "--priority", "1", "--priority", "2"]), EXIT.usage, /option --priority is given more than once/);
    expectOneLineError(await cli(["runs", "list", "--job", "a", "--job=b"]), EXIT.usage, /option --job is given more than once/);
    expectOneLineError(await cli(["stats", "--json=1"]), EXIT.usage, /option --json takes no value/);
    // An option alone that pgtick does not know is named (it showed the help).
    expectOneLineError(await cli(["-v"]), EXIT.usage, /unknown option -v/);
  });
});

describe("migrate", () => {
  it("creates the tables once and then reports them up to date", async () => {
    const { cli, prefix } = await fresh();
    const again = await cli(["migrate"]);
    expect(again.code).toBe(0);
    const all = migrations.map((m) => m.version);
    expect(all.slice(0, 2)).toEqual([1, 2]);
    // The suite's JOBS_MODULE is the repository's, whose setup makes its own table.
    expect(again.stdout).toBe(`up to date: migrations ${all.join(", ")} already applied (tables ${prefix}*; ran the jobs module's setup)\n`);
    const other = await cli(["migrate", "--json"], { JOBS_TABLE_PREFIX: `${prefix}m_` });
    expect(json(other)).toEqual({ applied: all, versions: all, prefix: `${prefix}m_`, setup: true });
    // None named: the folder's functions/jobs.ts, as for every command; in a folder without one, none.
    const folder = await cli(["migrate", "--json"], { JOBS_TABLE_PREFIX: `${prefix}f_`, JOBS_MODULE: "" });
    expect(json(folder)).toEqual({ applied: all, versions: all, prefix: `${prefix}f_`, setup: true });
    const bare = await withoutModule(["migrate", "--json"]);
    expect(json(bare)).toMatchObject({ versions: all, setup: false });
    const tables = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE $1`, [`${prefix}m\\_%`]);
    expect(tables[0]!.n).toBeGreaterThanOrEqual(5);
  });
});

describe("enqueue", () => {
  it("validates, stores, delays and deduplicates", async () => {
    const { cli, rows } = await fresh();
    const now = await cli(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}']);
    expect(now.code).toBe(0);
    const id = /^([0-9a-f-]{36}) enqueued send-welcome, due now\n$/.exec(now.stdout)?.[1];
    expect(id).toBeDefined();
    const later = await cli(["enqueue", "send-reminder", '{"email":"ada@example.com","about":"x"}', "--delay", "10m", "--priority", "5", "--correlation-id", "req-1"]);
    expect(later.stdout).toMatch(/enqueued send-reminder, due in 10m/);
    const stored = await rows<{ job_name: string; payload: unknown; due_in_s: number; priority: number; correlation_id: string | null }>(
      `SELECT job_name, payload, extract(epoch FROM run_at - now())::int AS due_in_s, priority, correlation_id FROM {p}queue ORDER BY created_at`,
    );
    expect(stored[0]).toMatchObject({ job_name: "send-welcome", payload: { email: "ada@example.com", name: "Ada" }, priority: 0 });
    expect(stored[0]!.due_in_s).toBeLessThanOrEqual(0);
    expect(stored[1]).toMatchObject({ job_name: "send-reminder", priority: 5, correlation_id: "req-1" });
    expect(stored[1]!.due_in_s).toBeGreaterThan(500);

    const first = json<{ id: string; deduplicated: boolean }>(await cli(["enqueue", "send-welcome", '{"email":"bob@example.com","name":"Bob"}', "--key", "welcome-bob", "--json"]));
    const second = await cli(["enqueue", "send-welcome", '{"email":"bob@example.com","name":"Bob"}', "--key", "welcome-bob"]);
    const long = json<{ id: string }>(await cli(["enqueue", "send-welcome", '{"email":"bob@example.com","name":"Bob"}', "--idempotency-key", "welcome-bob", "--json"]));
    expect(long).toMatchObject({ id: first.id, deduplicated: true });
    expect(first.deduplicated).toBe(false);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`${first.id} (deduplicated: a send-welcome job with key "welcome-bob" is already queued or running)\n`);

    // With a byte order mark an editor wrote (it was "not valid JSON").
    const piped = await cli(["enqueue", "sync-inventory", "-", "--json"], {}, '\uFEFF{"sku":"SKU-1"}\n');
    expect(piped.code).toBe(0);
    expect((await rows(`SELECT 1 FROM {p}queue WHERE id = $1`, [json<{ id: string }>(piped).id]))).toHaveLength(1);
    expect((await rows(`SELECT 1 FROM {p}queue`))).toHaveLength(4);
    // Nothing on stdin is said as such (it said to quote the payload for the shell).
    expectOneLineError(await cli(["enqueue", "sync-inventory", "-"], {}, "\n"), EXIT.usage, /stdin held no payload/);
    // A plain number is milliseconds: said so ("due in 30000" read as seconds).
    expect((await cli(["enqueue", "send-reminder", '{"email":"ada@example.com","about":"y"}', "--delay", "30000"])).stdout).toMatch(/enqueued send-reminder, due in 30000 ms\n$/);
  });

  it("refuses bad input with one line, the right exit code, and writes nothing", async () => {
    const { cli, rows } = await fresh();
    expectOneLineError(await cli(["enqueue", "send-welcome", "{email:"]), EXIT.usage, /the payload is not valid JSON/);
    expectOneLineError(await cli(["enqueue", "send-welcom", "{}"]), EXIT.rejected, /no job named "send-welcom" is defined/);
    // As the HTTP API: an integer past 2^53 was stored rounded, with exit 0.
    expectOneLineError(
      await cli(["enqueue", "send-welcome", '{"email":"a@b.co","name":"12345678901234567","id":12345678901234567}']),
      EXIT.rejected,
      /^pgtick: the payload: the number 12345678901234567 cannot be held exactly \(integers past 2\^53 are rounded\): send it as a string$/,
    );
    // What the message says already is not said again: only where it is.
    expectOneLineError(
      await cli(["enqueue", "send-welcome", '{"email":"a@b.co","name":"x\\u0000y"}']),
      EXIT.rejected,
      /^pgtick: payload for send-welcome holds text PostgreSQL cannot store: U\+0000 is not allowed in strings \(at name\)$/,
    );
    expectOneLineError(
      await cli(["enqueue", "send-welcome", '{"email":"not-an-address"}']),
      EXIT.rejected,
      /payload for send-welcome does not match its schema: email: .*; name: /,
    );
    expectOneLineError(await cli(["enqueue", "send-welcome"]), EXIT.usage, /missing argument; usage: pgtick enqueue <job> <json\|->/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--delay", "1m", "--run-at", "2030-01-01T00:00:00Z"]), EXIT.usage, /--delay or --run-at, not both/);
    // Said with the flag that gave it (it said "runAt must be ...", a name this command has no flag of).
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--run-at", "tomorrow"]), EXIT.rejected, /: --run-at must be a date/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--key", "a\u0000b"]), EXIT.rejected, /: --key must be a string of 1 to 255 characters without U\+0000/);
    // Named as runs list names it, too; an error names the flag given.
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--idempotency-key", ""]), EXIT.rejected, /: --idempotency-key must be a string of 1 to 255/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--idempotency-key", "a", "--key", "a"]), EXIT.usage, /--idempotency-key or --key, not both/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--max-attempts", "0"]), EXIT.rejected, /--max-attempts must be a whole number from 1 to 1000/);
    expectOneLineError(await withoutModule(["enqueue", "sync-inventory", '{"sku":"a"}']), EXIT.config, /enqueue needs your job definitions: pass --jobs <module> or set JOBS_MODULE/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--jobs", "examples/missing.ts"]), EXIT.config, /jobs module examples\/missing.ts does not exist/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--jobs", "src/settings/duration.ts"]), EXIT.config, /jobs module src\/settings\/duration.ts must export `jobs`/);
    expect(await rows(`SELECT 1 FROM {p}queue`)).toHaveLength(0);
  });
});

describe("tick", () => {
  it("runs one tick with the module's handlers and prints its report", async () => {
    const { cli, rows } = await fresh();
    const ok = json<{ id: string }>(await cli(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}', "--json"]));
    const failing = json<{ id: string }>(await cli(["enqueue", "sync-inventory", '{"sku":"SKU-9"}', "--json"]));
    const tick = await cli(["tick", "--budget", "10s"]);
    expect(tick.code).toBe(0);
    // Its retry comes due within a second, before the tick's cutoff: the same tick runs it, and it is dead-lettered.
    expect(tick.stdout).toMatch(/^tick: claimed \d+, succeeded \d+, retried 1, dead-lettered 1, requeued 0 in .+ \(\d+ statements\)\n$/);
    // The retry is logged on stderr as a JSON line; stdout stays the report.
    expect(tick.stderr).toContain('"msg":"job failed, will retry"');
    expect(await rows(`SELECT 1 FROM {p}queue WHERE id = $1`, [ok.id])).toHaveLength(0);
    expect(await rows(`SELECT attempts, reason, last_error FROM {p}dead_letters WHERE id = $1`, [failing.id])).toEqual([
      { attempts: 2, reason: "exhausted", last_error: "inventory service answered 503 for SKU-9" },
    ]);
    // The module's minutely schedule would put a job in the queue whenever a minute begins between the two ticks.
    expect((await cli(["schedules", "pause", "tokyo-digest"])).code).toBe(0);
    const idle = json<{ claimed: number; statements: number }>(await cli(["tick", "--json"]));
    expect(idle.claimed).toBe(0);
    expectOneLineError(await withoutModule(["tick"]), EXIT.config, /tick needs your job definitions/);
    // With none named, the folder's functions/jobs.ts is the jobs module, as for `npm run dev`.
    expect((await cli(["tick", "--json"], { JOBS_MODULE: "" })).code).toBe(0);
  });
});

describe("enqueue --debounce", () => {
  it("folds enqueues of one key into the queued job, due --delay from now, never later than --max-wait from the first; refuses what does not go with it", async () => {
    const { cli, rows } = await fresh();
    const args = (email: string) => ["enqueue", "send-reminder", JSON.stringify({ email, about: "x" }), "--debounce", "ada", "--delay", "10m"];
    const first = json<{ id: string; debounced: boolean }>(await cli([...args("a@example.com"), "--max-wait", "15m", "--json"]));
    expect(first.debounced).toBe(false);
    const again = await cli(args("b@example.com"));
    expect(again.stdout).toBe(`${first.id} debounced: the queued send-reminder job with key "ada" takes this payload, due in 10m\n`);
    const [row] = await rows<{ email: string; wait: number; cap: number }>(
      `SELECT payload->>'email' AS email, (extract(epoch FROM run_at - created_at))::float8 AS wait, (extract(epoch FROM debounce_until - created_at))::float8 AS cap FROM {p}queue WHERE id = $1`, [first.id]);
    expect(row).toMatchObject({ email: "b@example.com" });
    expect(row!.cap).toBeCloseTo(900, 0);
    expect(row!.wait).toBeGreaterThanOrEqual(600);
    expectOneLineError(await cli([...args("c@example.com"), "--max-wait", "1m"]), EXIT.rejected, /^pgtick: --max-wait must be a number of milliseconds from delayMs/);
    expectOneLineError(await cli(["enqueue", "send-reminder", '{"email":"d@example.com","about":"x"}', "--max-wait", "1m"]), EXIT.usage, /--max-wait goes with --debounce/);
    expectOneLineError(await cli(["enqueue", "send-reminder", '{"email":"e@example.com","about":"x"}', "--debounce", "ada", "--run-at", "2031-01-01T00:00:00Z"]), EXIT.usage, /without --run-at/);
    expectOneLineError(await cli([...args("f@example.com"), "--key", "k"]), EXIT.usage, /--debounce or an idempotency key, not both/);
    expect(await rows(`SELECT 1 FROM {p}queue`)).toHaveLength(1);
  });
});

describe("the folder's jobs module", () => {
  it("decides the tables of every command, not only of those that run jobs (migrate, stats and runs used jobs_* while enqueue used the module's prefix)", async () => {
    mkdirSync(join(root, "test-results"), { recursive: true });
    const dir = mkdtempSync(join(root, "test-results", "pgtick-folder-module-"));
    const prefix = `fold${Date.now() % 100_000}_`;
    try {
      mkdirSync(join(dir, "functions"));
      writeFileSync(join(dir, "functions", "jobs.ts"), [
        `export * from ${JSON.stringify(jobsModule)};`,
        `export const settings = { tablePrefix: ${JSON.stringify(prefix)} };`,
      ].join("\n"));
      const run = async (args: string[]) => {
        const { runCli } = await import("../src/cli/main.js");
        let [stdout, stderr] = ["", ""];
        const code = await runCli(args, {
          stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd: dir,
          env: { DATABASE_URL: h.url, DEV_DIR: mkdtempSync(join(tmpdir(), "pgtick-cli-dev-")) },
        });
        return { code, stdout, stderr };
      };
      const migrated = await run(["migrate"]);
      expect(migrated.stdout).toContain(`tables ${prefix}*`);
      const queued = json<{ id: string }>(await run(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}', "--json"]));
      const stats = json<{ queue: Array<{ job: string; count: number; status: string }> }>(await run(["stats", "--json"]));
      expect(stats.queue).toContainEqual(expect.objectContaining({ job: "send-welcome", count: 1, status: "queued" }));
      expect(await h.rows(`SELECT id FROM ${prefix}queue WHERE id = $1`, [queued.id])).toHaveLength(1);
    } finally {
      await h.rows(`DO $$ DECLARE r record; BEGIN FOR r IN SELECT tablename FROM pg_tables WHERE tablename LIKE '${prefix}%' LOOP EXECUTE format('DROP TABLE %I CASCADE', r.tablename); END LOOP; END $$`);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("one that does not load leaves commands that need no definitions working on the default tables, with a warning; those that need it say why they stop", async () => {
    mkdirSync(join(root, "test-results"), { recursive: true });
    const dir = mkdtempSync(join(root, "test-results", "pgtick-folder-broken-"));
    try {
      mkdirSync(join(dir, "functions"));
      writeFileSync(join(dir, "functions", "jobs.ts"), `if (!process.env.STRIPE_KEY) throw new Error("STRIPE_KEY is not set");\nexport const jobs = [];\n`);
      const run = async (args: string[]) => {
        const { runCli } = await import("../src/cli/main.js");
        let [stdout, stderr] = ["", ""];
        const code = await runCli(args, {
          stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd: dir,
          env: { DATABASE_URL: h.url, JOBS_TABLE_PREFIX: "cli_broken_", DEV_DIR: mkdtempSync(join(tmpdir(), "pgtick-cli-dev-")) },
        });
        return { code, stdout, stderr };
      };
      for (const args of [["migrate"], ["stats"], ["dead-letters", "list"]]) {
        const r = await run(args);
        expect(r.code, args.join(" ")).toBe(0);
        expect(r.stderr).toMatch(/^pgtick: warning: cannot load jobs module functions\/jobs.ts: .*STRIPE_KEY is not set; going on without it/);
      }
      const needs = await run(["enqueue", "x", "{}"]);
      expect(needs.code).toBe(EXIT.config);
      expect(needs.stderr).toMatch(/STRIPE_KEY is not set/);
    } finally {
      await h.rows(`DO $$ DECLARE r record; BEGIN FOR r IN SELECT tablename FROM pg_tables WHERE tablename LIKE 'cli\\_broken\\_%' LOOP EXECUTE format('DROP TABLE %I CASCADE', r.tablename); END LOOP; END $$`);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("telemetry", () => {
  it("sends on what the module's observer recorded before it exits (a batch processor held the tick's spans)", async () => {
    const { cli, env } = await fresh();
    mkdirSync(join(root, "test-results"), { recursive: true });
    const dir = mkdtempSync(join(root, "test-results", "pgtick-otel-"));
    try {
      const mod = join(dir, "jobs.ts");
      writeFileSync(mod, [
        `import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";`,
        `import { openTelemetry } from ${JSON.stringify(resolve(root, "src/otel/index.ts"))};`,
        `export * from ${JSON.stringify(jobsModule)};`,
        `const exporter = new InMemorySpanExporter();`,
        // A long delay: only a flush sends the spans before the process would exit.
        `const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 60_000 })] });`,
        `(globalThis as { cliSpans?: InMemorySpanExporter }).cliSpans = exporter;`,
        `export const observer = openTelemetry({ tracerProvider });`,
      ].join("\n"));
      const ticked = await cli(["tick", "--jobs", mod, "--json"], { JOBS_TABLE_PREFIX: env.JOBS_TABLE_PREFIX });
      expect(ticked.code).toBe(0);
      const exporter = (globalThis as { cliSpans?: { getFinishedSpans(): Array<{ name: string }> } }).cliSpans;
      expect(exporter?.getFinishedSpans().map((s) => s.name)).toContain("pgtick.tick");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("configuration and connection errors", () => {
  it("names what is missing or unreachable, with exit codes 6 and 7", async () => {
    const { cli, prefix } = await fresh();
    expectOneLineError(await cli(["stats"], { DATABASE_URL: "", DEV_DIR: "/nonexistent-dev-dir" }), EXIT.config, /DATABASE_URL is not set/);
    expectOneLineError(await cli(["stats"], { JOBS_TABLE_PREFIX: `${prefix}none_` }), EXIT.config, /run `pgtick migrate` first/);
    expectOneLineError(await cli(["stats"], { JOBS_TABLE_PREFIX: "Bad-Prefix" }), EXIT.config, /JOBS_TABLE_PREFIX must be/);
    // A misspelt variable is named, where it was ignored without a word.
    const typo = await cli(["stats"], { JOBS_CONCURENCY: "5" });
    expect(typo.code).toBe(EXIT.ok);
    expect(typo.stderr).toBe("pgtick: warning: JOBS_CONCURENCY is no setting pgtick knows; it is ignored (see the README's settings tables)\n");
    const port = await freePort();
    expectOneLineError(await cli(["stats"], { DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` }), EXIT.unreachable, /cannot connect to the database/);
  });

  it("takes a named jobs module's settings for every command, migrate and stats too", async () => {
    const { cli } = await fresh();
    const dir = mkdtempSync(join(tmpdir(), "pgtick-cli-mod-"));
    const mod = join(dir, "jobs.ts");
    writeFileSync(mod, `export * from ${JSON.stringify(jobsModule)};\nexport const settings = { tablePrefix: "climod_" };\n`);
    const noPrefix = { JOBS_TABLE_PREFIX: "", JOBS_MODULE: "" };
    const migrated = await cli(["migrate", "--jobs", mod], noPrefix);
    expect(migrated.stdout).toContain("(tables climod_*; ran the jobs module's setup)");
    expect((await cli(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}', "--jobs", mod], noPrefix)).code).toBe(0);
    expect(json<{ queue: Array<{ job: string }> }>(await cli(["stats", "--json", "--jobs", mod], noPrefix)).queue).toMatchObject([{ job: "send-welcome" }]);
    // A module named but missing is an error for these commands too.
    expectOneLineError(await cli(["stats", "--jobs", join(dir, "nope.ts")], noPrefix), EXIT.config, /nope\.ts/);
    // A setup that fails is said to be the module's, after the library's migrations (it read "syntax error at end of input").
    const broken = join(dir, "broken.ts");
    writeFileSync(broken, `export * from ${JSON.stringify(jobsModule)};\nexport const settings = { tablePrefix: "climod_" };\nexport const setup = (db: { query(t: string): Promise<unknown> }) => db.query("CREATE TABLE");\n`);
    expectOneLineError(await cli(["migrate", "--jobs", broken], noPrefix), EXIT.failed, /^pgtick: the jobs module's setup\(db\) failed, after the library's migrations were applied: syntax error/);
    rmSync(dir, { recursive: true, force: true });
  });

  it("uses the dev server's jobs module, and its table prefix, for every command when it uses the dev server's database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pgtick-cli-devmod-"));
    const mod = join(dir, "jobs.ts");
    writeFileSync(mod, `export * from ${JSON.stringify(jobsModule)};\nexport const settings = { tablePrefix: "clidev_" };\n`);
    mkdirSync(join(dir, ".dev"));
    writeFileSync(join(dir, ".dev", "server.json"), JSON.stringify({ pid: process.pid, url: "http://127.0.0.1:1", databaseUrl: h.url, jobsModule: mod }));
    try {
      const { cli } = await fresh();
      const viaDev = { DATABASE_URL: "", JOBS_MODULE: "", JOBS_TABLE_PREFIX: "", DEV_DIR: join(dir, ".dev") };
      expect((await cli(["migrate"], viaDev)).stdout).toContain("(tables clidev_*");
      expect((await cli(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}', "--delay", "1h"], viaDev)).code).toBe(0);
      // stats, runs and dead letters read the queue the job went into (they read jobs_*, another queue's).
      expect(json<{ queue: Array<{ job: string }> }>(await cli(["stats", "--json"], viaDev)).queue).toMatchObject([{ job: "send-welcome" }]);
      expect(await h.rows(`SELECT count(*)::int AS n FROM clidev_queue`)).toEqual([{ n: 1 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("does not use a dev server running in the folder it runs in unless told to", async () => {
    const live = folderWithLiveDevServer(jobsModule);
    const { cli } = await fresh(live.dir);
    expectOneLineError(await cli(["stats"], { DATABASE_URL: "" }), EXIT.config, /DATABASE_URL is not set/);
    expectOneLineError(await cli(["tick"], { JOBS_MODULE: "" }), EXIT.config, /tick needs your job definitions/);
    // The same folder without the suite's own DEV_DIR: the CLI finds that server (and its missing database).
    expectOneLineError(await cli(["stats"], { DATABASE_URL: "", JOBS_MODULE: "", DEV_DIR: "" }), EXIT.unreachable, /cannot connect to the database/);
  });
});

/** The real executable, as `npx pgtick` runs it. */
const bin = (args: string[], env: Record<string, string>): Promise<Run> =>
  new Promise((done) => {
    execFile(process.execPath, [resolve(root, "src/cli/bin.mjs"), ...args], { cwd: root, env: isolatedEnv(env) }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });

describe("the pgtick executable", () => {
  it("enqueues, exits with the command's code, and shows a stack only with --verbose", async () => {
    const { env, rows } = await fresh();
    const ok = await bin(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}', "--json"], env);
    expect(ok.code).toBe(0);
    expect(await rows(`SELECT job_name FROM {p}queue WHERE id = $1`, [json<{ id: string }>(ok).id])).toEqual([{ job_name: "send-welcome" }]);
    expectOneLineError(await bin(["enqueue", "send-welcome", "{bad"], env), EXIT.usage, /the payload is not valid JSON/);
    expectOneLineError(await bin(["enqueue", "nope", "{}"], env), EXIT.rejected, /no job named "nope"/);
    const port = await freePort();
    const down = { ...env, DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` };
    expectOneLineError(await bin(["stats"], down), EXIT.unreachable, /cannot connect to the database/);
    const verbose = await bin(["stats", "--verbose"], down);
    expect(verbose.code).toBe(EXIT.unreachable);
    expect(verbose.stderr).toMatch(/\n\s+at /);
  }, 60_000);

  it("loads a TypeScript jobs module from a package that is not an ES module package, as most apps' are", async () => {
    const { env } = await fresh();
    for (const pkg of ['{"name":"app","type":"commonjs"}', '{"name":"app"}']) {
      const dir = mkdtempSync(join(tmpdir(), "pgtick-cjs-"));
      try {
        writeFileSync(join(dir, "package.json"), pkg);
        writeFileSync(join(dir, "jobs.ts"), "export const jobs: unknown[] = [];\n");
        // Loaded: the job is unknown to it (before: "cannot load jobs module ... Cannot require() ES Module").
        expectOneLineError(await bin(["enqueue", "nope", "{}", "--jobs", join(dir, "jobs.ts")], env), EXIT.rejected, /no job named "nope"/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it("exits once a tick's report is out, not when a handler it requeued at the deadline ends", async () => {
    const { env, rows } = await fresh();
    await bin(["enqueue", "build-report", '{"seconds":30}'], env);
    const started = Date.now();
    const run = await bin(["tick", "--budget", "2s"], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/requeued 1/);
    // Before, it stayed for a late settle that timed out on its closed pool, and said so.
    expect(run.stderr).not.toMatch(/late settlement/);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await rows(`SELECT status FROM {p}queue`)).toEqual([{ status: "queued" }]);
  });

  it("takes none of pgtick's or node-postgres' variables from the shell the tests run in", async () => {
    const { env, rows } = await fresh();
    const saved = { ...process.env };
    // What a developer may have exported: each one alone would make this enqueue fail.
    Object.assign(process.env, { JOBS_MAX_PAYLOAD_BYTES: "16", PGSSLMODE: "require" });
    let ok: Run;
    try {
      ok = await bin(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}', "--json"], env);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(await rows(`SELECT job_name FROM {p}queue WHERE id = $1`, [json<{ id: string }>(ok).id])).toEqual([{ job_name: "send-welcome" }]);
  });
});

describe("a database that takes the connection and never answers, and a broken jobs module", () => {
  /** A server that accepts connections and never says a word: a frozen database, a stuck pooler. */
  const silentServer = async () => {
    const { createServer } = await import("node:net");
    const sockets = new Set<import("node:net").Socket>();
    const server = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const port = (server.address() as { port: number }).port;
    return {
      url: (query = "") => `postgres://postgres@127.0.0.1:${port}/x${query}`,
      /** Whether a client has connected: a CLI connects once its signal handlers are in place. */
      connected: () => sockets.size > 0,
      close: () => new Promise<void>((done) => { for (const s of sockets) s.destroy(); server.close(() => done()); }),
    };
  };

  it("exits 7 within the URL's connect_timeout from every command, where it waited for ever", async () => {
    const { env } = await fresh();
    const silent = await silentServer();
    try {
      for (const args of [["stats"], ["migrate"], ["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}']]) {
        expectOneLineError(await bin(args, { ...env, DATABASE_URL: silent.url("?connect_timeout=1") }), EXIT.unreachable, /cannot connect to the database: it took the connection but did not answer/);
      }
    } finally {
      await silent.close();
    }
  });

  it("stops at one SIGTERM: a tick cleanly, any other command within its grace", async () => {
    const { env } = await fresh();
    const silent = await silentServer();
    try {
      const child = (await import("node:child_process")).spawn(process.execPath, [resolve(root, "src/cli/bin.mjs"), "migrate"], {
        cwd: root,
        env: isolatedEnv({ ...env, DATABASE_URL: silent.url("?connect_timeout=600") }),
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
      // Once it is waiting on the database (a fixed 1.5 s was before its handlers, on a loaded machine).
      for (let i = 0; i < 400 && !silent.connected(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(silent.connected()).toBe(true);
      child.kill("SIGTERM");
      // Before, it was still there after a SIGTERM until a second signal came.
      const code = await Promise.race([exited, new Promise<"running">((r) => setTimeout(() => r("running"), 15_000))]);
      if (code === "running") child.kill("SIGKILL");
      expect(code).toBe(EXIT.interrupted);
      // Said, not silent: what it leaves behind is not undone.
      expect(stderr).toMatch(/^pgtick: still waiting 5 s after the signal; exiting without waiting for the database \(what a tick was running stays claimed until its lease ends, then runs again\)\n$/);
    } finally {
      await silent.close();
    }
  });

  it("cancels on the server the statement an interrupted command was waiting on: an enqueue behind a lock writes nothing later", async () => {
    const { env, prefix } = await fresh();
    const locker = h.pool(1);
    const lock = await locker.connect();
    try {
      await lock.query(`BEGIN; LOCK TABLE ${prefix}queue IN ACCESS EXCLUSIVE MODE`);
      const child = (await import("node:child_process")).spawn(process.execPath, [resolve(root, "src/cli/bin.mjs"), "enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}'], {
        cwd: root, env: isolatedEnv(env), stdio: "ignore",
      });
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
      const waiting = async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO ${prefix}queue%'`))[0]!.n;
      for (let i = 0; i < 400 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await waiting()).toBe(1);
      child.kill("SIGINT");
      expect(await exited).toBe(EXIT.interrupted);
      // Before, the insert went on waiting, and ran once the lock was gone.
      expect(await waiting()).toBe(0);
    } finally {
      await lock.query("COMMIT").catch(() => {});
      lock.release();
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await h.rows(`SELECT id FROM ${prefix}queue`)).toEqual([]);
  });

  it("exits quietly, with its own code, when the reader of its output goes away (| head): no EPIPE stack", async () => {
    const { env } = await fresh();
    const run = async (args: string[]) => {
      const child = (await import("node:child_process")).spawn(process.execPath, [resolve(root, "src/cli/bin.mjs"), ...args], { cwd: root, env: isolatedEnv(env) });
      // The reader is gone before the command writes its answer.
      child.stdout.destroy();
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((done) => child.on("exit", (c) => done(c)));
      return { code, stderr };
    };
    expect(await run(["stats"])).toEqual({ code: 0, stderr: "" });
    // Two letters that are not there: exit 4, as without the pipe (the closed pipe's exit said 0).
    const ids = ["00000000-0000-7000-8000-000000000001", "00000000-0000-7000-8000-000000000002"];
    expect(await run(["dead-letters", "replay", ...ids])).toEqual({ code: EXIT.notFound, stderr: "" });
  });

  it("cancels on the server a statement given up on at its bound before it exits (exit 7): the enqueue ran later, and a retry made two jobs", async () => {
    const { env, prefix } = await fresh();
    const lock = await h.pool(1).connect();
    try {
      await lock.query(`BEGIN; LOCK TABLE ${prefix}queue IN ACCESS EXCLUSIVE MODE`);
      const run = await bin(["enqueue", "send-welcome", '{"email":"ada@example.com","name":"Ada"}'], env);
      expectOneLineError(run, EXIT.unreachable, /did not answer within 15000 ms/);
      // Read at once: the process exited only once its cancel request was delivered.
      expect(await h.rows(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO ${prefix}queue%'`)).toEqual([{ n: 0 }]);
    } finally {
      await lock.query("COMMIT").catch(() => {});
      lock.release();
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await h.rows(`SELECT id FROM ${prefix}queue`)).toEqual([]);
  }, 30_000);

  it("says why a bulk replay left a letter a limit's key function refused (exit 3; it said 'no such dead letter' and exit 0)", async () => {
    const { env, prefix } = await fresh();
    const dies = defineJob({ name: "sync", schema: z.object({ region: z.string() }), handler: () => { throw new PermanentJobError("429"); } });
    const v1 = h.make([dies], { tablePrefix: prefix });
    const done = await v1.enqueueMany([{ job: "sync", payload: { region: "eu" } }, { job: "sync", payload: { region: "" } }]);
    await v1.tick({ budgetMs: 3_000 });
    mkdirSync(join(root, "test-results"), { recursive: true });
    const dir = mkdtempSync(join(root, "test-results", "pgtick-limits-"));
    try {
      const mod = join(dir, "jobs.ts");
      writeFileSync(mod, [
        `import { z } from "zod";`,
        `import { defineJob } from ${JSON.stringify(resolve(root, "src/index.ts"))};`,
        `export const jobs = [defineJob({ name: "sync", schema: z.object({ region: z.string() }), concurrency: { limit: 1, key: (p) => p.region }, handler: () => {} })];`,
      ].join("\n"));
      const run = await bin(["dead-letters", "replay", done[0]!.id, done[1]!.id, "--jobs", mod], { ...env, JOBS_MODULE: mod });
      expect(run.code).toBe(EXIT.rejected);
      expect(run.stdout).toContain(`replayed 1 dead letter\nskipped ${done[1]!.id}: concurrency.key of job sync must return a string of 1 to 255 characters`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says a module whose schedule the job's schema refuses is broken (exit 6), for every command", async () => {
    const { env } = await fresh();
    // Inside the project (git-ignored), so that the module finds zod as an app's module would.
    mkdirSync(join(root, "test-results"), { recursive: true });
    const dir = mkdtempSync(join(root, "test-results", "pgtick-badsched-"));
    try {
      const mod = join(dir, "jobs.ts");
      writeFileSync(mod, [
        `import { z } from "zod";`,
        `import { defineJob, defineSchedule } from ${JSON.stringify(resolve(root, "src/index.ts"))};`,
        `export const jobs = [defineJob({ name: "report", schema: z.object({ region: z.enum(["eu", "us"]) }), handler: () => {} })];`,
        `export const schedules = [defineSchedule({ name: "rep", cron: "0 * * * *", job: "report", payload: { region: "apac" } as never })];`,
      ].join("\n"));
      for (const args of [["stats"], ["dead-letters", "list"], ["tick"]]) {
        expectOneLineError(await bin([...args, "--jobs", mod], env), EXIT.config, /the jobs module's definitions are refused: schedule "rep"/);
      }
      // A job defined twice is a broken module too (it was a TypeError: exit 1, as for a bug).
      const twice = join(dir, "twice.ts");
      writeFileSync(twice, [
        `import { z } from "zod";`,
        `import { defineJob } from ${JSON.stringify(resolve(root, "src/index.ts"))};`,
        `const job = () => defineJob({ name: "x", schema: z.object({}), handler: () => {} });`,
        `export const jobs = [job(), job()];`,
      ].join("\n"));
      expectOneLineError(await bin(["stats", "--jobs", twice], env), EXIT.config, /the jobs module's definitions are refused: job "x" is defined twice/);
      // A syntax error says where it is (before: "Transform failed with 1 error:" and nothing more).
      const typo = join(dir, "typo.ts");
      writeFileSync(typo, "export const jobs = [ ;\n");
      expectOneLineError(await bin(["stats", "--jobs", typo], env), EXIT.config, /cannot load jobs module .*typo\.ts: Transform failed with 1 error: .*typo\.ts:1:\d+: ERROR: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

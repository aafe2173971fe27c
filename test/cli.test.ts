// The operator CLI against a real PostgreSQL: every command, its output, its
// exit code, and its error paths. Most runs go through `runCli` in-process (the
// same code the executable runs); the last tests run the real executable.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../src/cli/main.js";
import { EXIT } from "../src/exit-codes.js";
import { migrations } from "../src/migrations.generated.js";
import { freePort } from "./support/postgres.js";
import { harness } from "./support/harness.js";
import { emptyFolder, folderWithLiveDevServer, isolatedEnv } from "./support/isolated-env.js";

const h = await harness("cli");
const root = resolve(import.meta.dirname, "..");
const jobsModule = resolve(root, "functions/jobs.ts");
// The CLI under test looks for a running dev server in a folder of its own, which
// holds none: a `npm run dev` in this repository must not stand in for an unset
// DATABASE_URL or JOBS_MODULE.
const devDir = emptyFolder("pgtick-cli-dev-");
// A folder without functions/jobs.ts, the jobs module the CLI takes when none is named.
const noModule = emptyFolder("pgtick-cli-nomodule-");
/** The CLI run from a folder with no jobs module and none named. */
const withoutModule = async (args: string[]) => (await fresh(noModule)).cli(args, { JOBS_MODULE: "" });

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let prefixes = 0;
/** A table prefix of its own per test, migrated through the CLI itself. */
const fresh = async (cwd = root) => {
  const env = { DATABASE_URL: h.url, JOBS_MODULE: jobsModule, JOBS_TABLE_PREFIX: `cli${++prefixes}_`, DEV_DIR: devDir };
  const cli = async (args: string[], extra: Record<string, string> = {}, stdin?: string): Promise<Run> => {
    let stdout = "";
    let stderr = "";
    const code = await runCli(args, {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      env: { ...env, ...extra },
      cwd,
      stdin: stdin === undefined ? undefined : async () => stdin,
    });
    return { code, stdout, stderr };
  };
  const migrated = await cli(["migrate"]);
  expect(migrated.code).toBe(0);
  const p = env.JOBS_TABLE_PREFIX;
  const rows = <R = Record<string, unknown>>(sql: string, params: unknown[] = []) => h.rows<R>(sql.replaceAll("{p}", p), params);
  return { cli, env, rows, prefix: p };
};

const json = <T = Record<string, unknown>>(r: Run): T => JSON.parse(r.stdout) as T;

/** One line on stderr, no stack trace. */
const expectOneLineError = (r: Run, code: number, text: string | RegExp) => {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^pgtick: /);
  expect(lines[0]).toMatch(text);
  expect(r.stderr).not.toMatch(/\n\s+at /);
};

/** Makes dead letters of sync-inventory (it always fails) with one attempt each. */
const deadLetters = async (cli: Awaited<ReturnType<typeof fresh>>["cli"], skus: string[], extra: string[] = []) => {
  const ids: string[] = [];
  for (const sku of skus) {
    const r = await cli(["enqueue", "sync-inventory", JSON.stringify({ sku }), "--max-attempts", "1", "--json", ...extra]);
    expect(r.code).toBe(0);
    ids.push(json<{ id: string }>(r).id);
  }
  const tick = await cli(["tick", "--json"]);
  expect(json<{ deadLettered: number }>(tick).deadLettered).toBe(skus.length);
  return ids;
};

describe("help and usage", () => {
  it("lists every command, and each command explains itself", async () => {
    const { cli } = await fresh();
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const c of ["migrate", "tick", "enqueue <job> <json|->", "dead-letters list", "dead-letters show <id>", "dead-letters replay", "dead-letters discard", "runs list", "runs show <run id>", "schedules list", "schedules pause <name>", "schedules resume <name>", "schedules run <name>", "stats"]) {
      expect(help.stdout).toContain(c);
    }
    expect(help.stdout).toContain("Exit codes:");
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
    expectOneLineError(await cli(["dead-letters", "list", "--limit", "0"]), EXIT.usage, /--limit must be a whole number from 1 to 500/);
    expectOneLineError(await cli(["tick", "--budget", "soon"]), EXIT.usage, /--budget must be a duration/);
  });
});

describe("migrate", () => {
  it("creates the tables once and then reports them up to date", async () => {
    const { cli, prefix } = await fresh();
    const again = await cli(["migrate"]);
    expect(again.code).toBe(0);
    const all = migrations.map((m) => m.version);
    expect(all.slice(0, 2)).toEqual([1, 2]);
    expect(again.stdout).toBe(`up to date: migrations ${all.join(", ")} already applied (tables ${prefix}*)\n`);
    const other = await cli(["migrate", "--json"], { JOBS_TABLE_PREFIX: `${prefix}m_` });
    expect(json(other)).toEqual({ applied: all, versions: all, prefix: `${prefix}m_` });
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
    expect(first.deduplicated).toBe(false);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`${first.id} (deduplicated: a send-welcome job with key "welcome-bob" is already queued or running)\n`);

    const piped = await cli(["enqueue", "sync-inventory", "-", "--json"], {}, '{"sku":"SKU-1"}\n');
    expect(piped.code).toBe(0);
    expect((await rows(`SELECT 1 FROM {p}queue WHERE id = $1`, [json<{ id: string }>(piped).id]))).toHaveLength(1);
    expect((await rows(`SELECT 1 FROM {p}queue`))).toHaveLength(4);
  });

  it("refuses bad input with one line, the right exit code, and writes nothing", async () => {
    const { cli, rows } = await fresh();
    expectOneLineError(await cli(["enqueue", "send-welcome", "{email:"]), EXIT.usage, /the payload is not valid JSON/);
    expectOneLineError(await cli(["enqueue", "send-welcom", "{}"]), EXIT.rejected, /no job named "send-welcom" is defined/);
    expectOneLineError(
      await cli(["enqueue", "send-welcome", '{"email":"not-an-address"}']),
      EXIT.rejected,
      /payload for send-welcome does not match its schema: email: .*; name: /,
    );
    expectOneLineError(await cli(["enqueue", "send-welcome"]), EXIT.usage, /missing argument; usage: pgtick enqueue <job> <json\|->/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--delay", "1m", "--run-at", "2030-01-01T00:00:00Z"]), EXIT.usage, /--delay or --run-at, not both/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--run-at", "tomorrow"]), EXIT.rejected, /runAt must be a date/);
    expectOneLineError(await cli(["enqueue", "sync-inventory", '{"sku":"a"}', "--max-attempts", "0"]), EXIT.usage, /--max-attempts must be a whole number from 1 to 1000/);
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
    expect(tick.stdout).toMatch(/^tick: claimed \d+, succeeded \d+, retried 1, dead-lettered 0, requeued 0 in .+ \(\d+ statements\)\n$/);
    // The retry is logged on stderr as a JSON line; stdout stays the report.
    expect(tick.stderr).toContain('"msg":"job failed, will retry"');
    expect(await rows(`SELECT 1 FROM {p}queue WHERE id = $1`, [ok.id])).toHaveLength(0);
    expect(await rows(`SELECT status, attempt, last_error FROM {p}queue WHERE id = $1`, [failing.id])).toEqual([
      { status: "queued", attempt: 1, last_error: "inventory service answered 503 for SKU-9" },
    ]);
    const idle = json<{ claimed: number; statements: number }>(await cli(["tick", "--json"]));
    expect(idle.claimed).toBe(0);
    expectOneLineError(await withoutModule(["tick"]), EXIT.config, /tick needs your job definitions/);
    // With none named, the folder's functions/jobs.ts is the jobs module, as for `npm run dev`.
    expect((await cli(["tick", "--json"], { JOBS_MODULE: "" })).code).toBe(0);
  });
});

describe("dead-letters", () => {
  it("lists and shows dead letters, and says when one does not exist", async () => {
    const { cli } = await fresh();
    expect((await cli(["dead-letters", "list"])).stdout).toBe("no dead letters\n");
    const [a, b] = await deadLetters(cli, ["SKU-1", "SKU-2"]);
    const list = await cli(["dead-letters", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^id\s+job\s+reason\s+attempts\s+dead at\s+payload\s+last error$/);
    expect(list.stdout).toContain(a);
    // Each row shows the start of its payload; `show` prints it whole.
    expect(list.stdout).toMatch(new RegExp(`${b}\\s+sync-inventory\\s+exhausted\\s+1/1\\s+\\S+\\s+\\{"sku": "SKU-2"\\}`));
    const page = json<{ items: Array<{ id: string }>; nextCursor: string | null }>(await cli(["dead-letters", "list", "--limit", "1", "--json"]));
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ payloadPreview: expect.stringMatching(/^\{"sku": "SKU-[12]"\}$/), payloadBytes: 16, payloadTruncated: false });
    expect(page.items[0]).not.toHaveProperty("payload");
    expect(page.nextCursor).not.toBeNull();
    const next = json<{ items: Array<{ id: string }>; nextCursor: string | null }>(await cli(["dead-letters", "list", "--limit", "1", "--cursor", page.nextCursor!, "--json"]));
    expect([page.items[0]!.id, next.items[0]!.id].sort()).toEqual([a, b].sort());
    expect((await cli(["dead-letters", "list", "--job", "send-welcome", "--json"])).stdout).toContain('"items": []');

    const show = await cli(["dead-letters", "show", a!]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`id:              ${a}`);
    expect(show.stdout).toContain("last error:      inventory service answered 503 for SKU-1");
    expect(show.stdout).toContain('"sku": "SKU-1"');
    expect(json(await cli(["dead-letters", "show", a!, "--json"]))).toMatchObject({ id: a, job: "sync-inventory", reason: "exhausted", payload: { sku: "SKU-1" } });

    expectOneLineError(await cli(["dead-letters", "show", "00000000-0000-4000-8000-000000000000"]), EXIT.notFound, /no dead letter with id 00000000-0000-4000-8000-000000000000/);
    expectOneLineError(await cli(["dead-letters", "show", "not-an-id"]), EXIT.notFound, /no dead letter with id not-an-id/);
    expectOneLineError(await cli(["dead-letters", "list", "--cursor", "garbage!"]), EXIT.rejected, /cursor is not one this API returned/);
  });

  it("replays one, with an edited payload, in bulk, and refuses conflicts", async () => {
    const { cli, rows } = await fresh();
    const [a, b, c, d] = await deadLetters(cli, ["SKU-1", "SKU-2", "SKU-3", "SKU-4"]);
    const one = await cli(["dead-letters", "replay", a!]);
    expect(one.code).toBe(0);
    expect(one.stdout).toBe(`replayed ${a}\n`);
    expect(await rows(`SELECT status, attempt FROM {p}queue WHERE id = $1`, [a])).toEqual([{ status: "queued", attempt: 0 }]);
    expectOneLineError(await cli(["dead-letters", "replay", a!]), EXIT.notFound, new RegExp(`no dead letter with id ${a}`));

    expectOneLineError(await cli(["dead-letters", "replay", b!, "--payload", '{"sku":7}']), EXIT.rejected, /payload for sync-inventory does not match its schema: sku: /);
    expectOneLineError(await cli(["dead-letters", "replay", b!, "--payload", "{sku"]), EXIT.usage, /--payload is not valid JSON/);
    expect(await rows(`SELECT 1 FROM {p}dead_letters WHERE id = $1`, [b])).toHaveLength(1);
    const edited = await cli(["dead-letters", "replay", b!, "--payload", '{"sku":"SKU-2b"}']);
    expect(edited.stdout).toBe(`replayed ${b} with the edited payload\n`);
    expect(await rows(`SELECT payload FROM {p}queue WHERE id = $1`, [b])).toEqual([{ payload: { sku: "SKU-2b" } }]);

    const bulk = await cli(["dead-letters", "replay", c!, "00000000-0000-4000-8000-000000000000", "--json"]);
    expect(bulk.code).toBe(EXIT.notFound);
    expect(json(bulk)).toEqual({ replayed: [c], skipped: [{ id: "00000000-0000-4000-8000-000000000000", reason: "not_found" }], remaining: 0 });
    const byJob = await cli(["dead-letters", "replay", "--job", "sync-inventory"]);
    expect(byJob.code).toBe(0);
    expect(byJob.stdout).toBe("replayed 1 dead letter\n");
    expect(await rows(`SELECT id FROM {p}queue WHERE id = $1`, [d])).toHaveLength(1);

    expectOneLineError(await cli(["dead-letters", "replay"]), EXIT.usage, /give at least one dead letter id, or --job NAME/);
    expectOneLineError(await cli(["dead-letters", "replay", a!, "--job", "x"]), EXIT.usage, /ids or --job, not both/);
  });

  it("refuses a replay while a live job holds the idempotency key (exit 5), then discards", async () => {
    const { cli, rows } = await fresh();
    const [dead] = await deadLetters(cli, ["SKU-7"], ["--key", "sku-7"]);
    const live = await cli(["enqueue", "sync-inventory", '{"sku":"SKU-7"}', "--key", "sku-7"]);
    expect(live.code).toBe(0);
    expectOneLineError(await cli(["dead-letters", "replay", dead!]), EXIT.conflict, /a queued or running job already has its id or idempotency key/);
    expect(await rows(`SELECT 1 FROM {p}dead_letters WHERE id = $1`, [dead])).toHaveLength(1);

    const discard = await cli(["dead-letters", "discard", dead!]);
    expect(discard).toEqual({ code: 0, stdout: `discarded ${dead}\n`, stderr: "" });
    expect(await rows(`SELECT 1 FROM {p}dead_letters`)).toHaveLength(0);
    const again = await cli(["dead-letters", "discard", dead!]);
    expectOneLineError(again, EXIT.notFound, new RegExp(`no dead letter with id ${dead}`));
    expectOneLineError(await cli(["dead-letters", "discard"]), EXIT.usage, /missing argument/);
  });
});

describe("runs", () => {
  it("lists the run history with filters and shows one run whole; a bad filter or an unknown run is one line", async () => {
    const { cli } = await fresh();
    const [id] = await deadLetters(cli, ["SKU-9"], ["--correlation-id", "restock-9"]);
    const list = await cli(["runs", "list", "--correlation-id", "restock-9"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/run\s+job\s+job id\s+attempt\s+outcome/);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain("dead_lettered");
    const page = json<{ items: Array<{ id: string; jobId: string }> }>(await cli(["runs", "list", "--job-id", id!, "--json"]));
    expect(page.items).toHaveLength(1);
    const show = await cli(["runs", "show", page.items[0]!.id]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`job:             sync-inventory (${id})`);
    expect(show.stdout).toMatch(/stack:\n.*Error/);
    expect((await cli(["runs", "list", "--outcome", "succeeded", "--correlation-id", "restock-9"])).stdout).toContain("no runs");
    expectOneLineError(await cli(["runs", "list", "--outcome", "won"]), EXIT.usage, /--outcome must be one of/);
    expectOneLineError(await cli(["runs", "list", "--since", "yesterday"]), EXIT.rejected, /since must be an ISO 8601 time/);
    expectOneLineError(await cli(["runs", "show", "123456789"]), EXIT.notFound, /no run with id 123456789/);
  });
});

describe("schedules", () => {
  it("lists, pauses, resumes and runs the module's schedules", async () => {
    const { cli, rows } = await fresh();
    const list = await cli(["schedules", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/tokyo-digest\s+active\s+tokyo-digest\s+\* \* \* \* \*\s+Asia\/Tokyo/);
    const next = json<Array<{ name: string; nextRuns: string[] }>>(await cli(["schedules", "list", "--next", "3", "--json"]));
    expect(next[0]!.nextRuns).toHaveLength(3);

    const paused = await cli(["schedules", "pause", "tokyo-digest"]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain("tokyo-digest: paused, every minute (Asia/Tokyo)");
    expect(await rows(`SELECT paused FROM {p}schedules WHERE name = 'tokyo-digest'`)).toEqual([{ paused: true }]);
    const resumed = json<{ paused: boolean; nextRuns: string[] }>(await cli(["schedules", "resume", "tokyo-digest", "--json"]));
    expect(resumed.paused).toBe(false);
    expect(resumed.nextRuns.length).toBeGreaterThan(0);

    const run = await cli(["schedules", "run", "tokyo-digest"]);
    expect(run.code).toBe(0);
    const id = /^([0-9a-f-]{36}) enqueued by schedule tokyo-digest, due now\n$/.exec(run.stdout)?.[1];
    expect(await rows(`SELECT job_name, payload FROM {p}queue WHERE id = $1`, [id])).toEqual([{ job_name: "tokyo-digest", payload: { edition: "minutely" } }]);

    expectOneLineError(await cli(["schedules", "pause", "nightly"]), EXIT.notFound, /no schedule named "nightly" is defined/);
    expectOneLineError(await cli(["schedules", "run"]), EXIT.usage, /missing argument; usage: pgtick schedules run <name>/);
    expectOneLineError(await withoutModule(["schedules", "list"]), EXIT.config, /schedules list needs your job definitions/);
  });
});

describe("stats", () => {
  it("shows depth, dead letters and the last tick", async () => {
    const { cli } = await fresh();
    const empty = await cli(["stats"]);
    expect(empty.stdout).toContain("no jobs queued, no dead letters, nothing ran in the last hour");
    expect(empty.stdout).toContain("last tick: never");
    await deadLetters(cli, ["SKU-1"]);
    await cli(["enqueue", "send-reminder", '{"email":"ada@example.com","about":"x"}', "--delay", "1h"]);
    const stats = await cli(["stats"]);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/send-reminder\s+1\s+0\s+-\s+0/);
    expect(stats.stdout).toMatch(/sync-inventory\s+0\s+0\s+-\s+1\s+0\s+1/);
    expect(stats.stdout).toMatch(/last tick: \d{4}-/);
    const s = json<{ queue: Array<{ job: string; count: number }>; deadLetters: Array<{ job: string; count: number }> }>(await cli(["stats", "--json"]));
    expect(s.queue).toEqual([expect.objectContaining({ job: "send-reminder", status: "queued", count: 1 })]);
    expect(s.deadLetters).toEqual([expect.objectContaining({ job: "sync-inventory", count: 1 })]);
  });
});

describe("configuration and connection errors", () => {
  it("names what is missing or unreachable, with exit codes 6 and 7", async () => {
    const { cli, prefix } = await fresh();
    expectOneLineError(await cli(["stats"], { DATABASE_URL: "", DEV_DIR: "/nonexistent-dev-dir" }), EXIT.config, /DATABASE_URL is not set/);
    expectOneLineError(await cli(["stats"], { JOBS_TABLE_PREFIX: `${prefix}none_` }), EXIT.config, /run `pgtick migrate` first/);
    expectOneLineError(await cli(["stats"], { JOBS_TABLE_PREFIX: "Bad-Prefix" }), EXIT.config, /JOBS_TABLE_PREFIX must be/);
    const port = await freePort();
    expectOneLineError(await cli(["stats"], { DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` }), EXIT.unreachable, /cannot connect to the database/);
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

// `npm run dev` while it runs, on a jobs module of the test's own: an edit of the module is said (the server
// keeps what it imported, and its ticks and the CLI synced two lists of schedules, each removing what the
// other added); a second Ctrl-C while a stop waits (its tick's requeue on a lock) stops at once, PostgreSQL
// included (before, the process exited and left its database running, in a session of its own out of the
// terminal's reach, with the server's file behind it).
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../src/cli/main.js";
import { removeDataDir } from "../src/dev/pg-data.js";
import { postgresUser } from "../src/dev/pg-user.js";
import { FROM_SOURCE, isolatedEnv } from "./support/isolated-env.js";
import { freePort } from "./support/postgres.js";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "pgtick-dev-running-"));
const module = join(dir, "jobs.ts");
writeFileSync(module, `export { jobs } from ${JSON.stringify(join(root, "functions/jobs.ts"))};\n`);

const until = async (probe: () => boolean | Promise<boolean>, ms: number, what: string) => {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

let child: ChildProcess;
let output = "";
let exit: Promise<number | null>;
let port = 0;

beforeAll(async () => {
  port = await freePort();
  child = spawn(process.execPath, [...FROM_SOURCE, "scripts/dev.ts"], {
    cwd: root,
    // No cron within the test: a job runs at once only when something starts a tick.
    env: isolatedEnv({ DEV_DIR: dir, PORT: String(port), NO_COLOR: "1", JOBS_MODULE: module, TICK_INTERVAL: "1h", DEV_SEED: "off", LOG_LEVEL: "debug" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  exit = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  await until(() => output.includes("Ctrl-C stops it") || child.exitCode !== null, 60_000, "the banner");
  expect(child.exitCode, output).toBeNull();
}, 90_000);

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
  removeDataDir(join(dir, "pg"), postgresUser());
  rmSync(dir, { recursive: true, force: true });
});

it("says that the jobs module changed, and to restart it", async () => {
  expect(output).not.toContain("the jobs module changed");
  appendFileSync(module, "// an edit\n");
  await until(() => output.includes("the jobs module changed: restart npm run dev to load it"), 10_000, "the warning");
});

it("starts a tick at once for a job the CLI queued due now, as the API's enqueue does (it waited for the cron)", async () => {
  // The tick the server starts with has ended: nothing else would run the job.
  await until(() => output.includes("tick finished"), 30_000, "the first tick to end");
  let stdout = "";
  const code = await runCli(["enqueue", "send-welcome", '{"email":"cli@example.com","name":"Cli"}', "--json"], {
    stdout: (t) => void (stdout += t), stderr: () => {}, env: { DEV_DIR: dir }, cwd: root,
  });
  expect(code).toBe(0);
  const { id } = JSON.parse(stdout) as { id: string };
  const token = (JSON.parse(readFileSync(join(dir, "secrets.json"), "utf8")) as { JOBS_API_TOKEN: string }).JOBS_API_TOKEN.split(",")[0]!.trim();
  const ran = async () => {
    const page = (await (await fetch(`http://127.0.0.1:${port}/api/runs?jobId=${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: Array<{ outcome: string }> };
    return page.items.some((r) => r.outcome === "succeeded");
  };
  await until(ran, 10_000, "the job to run");
});

it("stops PostgreSQL and exits 1 on a second Ctrl-C while a stop waits", async () => {
  const info = JSON.parse(readFileSync(join(dir, "server.json"), "utf8")) as { databaseUrl: string };
  const token = (JSON.parse(readFileSync(join(dir, "secrets.json"), "utf8")) as { JOBS_API_TOKEN: string }).JOBS_API_TOKEN.split(",")[0]!.trim();
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const enqueued = await fetch(`http://127.0.0.1:${port}/api/jobs`, { method: "POST", headers, body: JSON.stringify({ job: "example.sleep", payload: { ms: 60_000 } }) });
  expect(enqueued.status).toBe(201);
  const running = async () => ((await (await fetch(`http://127.0.0.1:${port}/api/jobs?status=running`, { headers })).json()) as { items: unknown[] }).items.length === 1;
  await until(running, 20_000, "the job to run");
  // The tick's requeue, when it stops, waits on this lock.
  const locker = new pg.Client({ connectionString: info.databaseUrl });
  locker.on("error", () => {});
  try {
    await locker.connect();
    const { rows } = await locker.query<{ name: string }>("SELECT quote_ident(tablename) AS name FROM pg_tables WHERE tablename LIKE '%queue' AND schemaname = 'public'");
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE ${rows[0]!.name} IN ACCESS EXCLUSIVE MODE`);
    child.kill("SIGINT");
    await until(() => output.includes("stopping (a running tick"), 10_000, "the first stop");
    await new Promise((r) => setTimeout(r, 1_500));
    expect(child.exitCode, output).toBeNull();
    child.kill("SIGINT");
    expect(await exit, output).toBe(1);
    expect(output).toContain("stopping at once");
    expect(existsSync(join(dir, "server.json"))).toBe(false);
    // Its PostgreSQL no longer answers.
    const probe = new pg.Client({ connectionString: info.databaseUrl, connectionTimeoutMillis: 2_000 });
    probe.on("error", () => {});
    await expect(probe.connect()).rejects.toThrow();
  } finally {
    await locker.end().catch(() => {});
  }
}, 60_000);

it("stops PostgreSQL and exits 1 on a second Ctrl-C while it still starts (its module's setup runs long)", async () => {
  const slow = mkdtempSync(join(tmpdir(), "pgtick-dev-slow-"));
  const slowModule = join(slow, "jobs.ts");
  writeFileSync(slowModule, `export { jobs } from ${JSON.stringify(join(root, "functions/jobs.ts"))};\nexport const setup = () => new Promise((r) => setTimeout(r, 20_000));\n`);
  const starting = spawn(process.execPath, [...FROM_SOURCE, "scripts/dev.ts"], {
    cwd: root,
    env: isolatedEnv({ DEV_DIR: slow, PORT: "0", NO_COLOR: "1", JOBS_MODULE: slowModule, DEV_SEED: "off" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let said = "";
  starting.stdout!.on("data", (d: Buffer) => (said += d.toString()));
  starting.stderr!.on("data", (d: Buffer) => (said += d.toString()));
  const ended = new Promise<number | null>((done) => starting.once("exit", (code) => done(code)));
  // The postgres processes of this folder's cluster (their command line names its data directory).
  const postgresOfFolder = () => execSync("ps -eo args=").toString().split("\n").filter((l) => /postgres/.test(l) && l.includes(slow));
  try {
    // Migrated: the setup is what runs now.
    await until(() => said.includes("migrations applied") || starting.exitCode !== null, 60_000, "the migrations");
    expect(postgresOfFolder().length, said).toBeGreaterThan(0);
    starting.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 1_500));
    expect(starting.exitCode, said).toBeNull();
    starting.kill("SIGINT");
    expect(await ended, said).toBe(1);
    expect(said).toContain("stopping at once");
    await until(() => postgresOfFolder().length === 0, 5_000, "its PostgreSQL to stop");
  } finally {
    if (starting.exitCode === null) starting.kill("SIGKILL");
    // A PostgreSQL left running by a failure of this test is stopped, not left to the machine.
    for (const line of execSync("ps -eo pid=,args=").toString().split("\n")) {
      if (/postgres/.test(line) && line.includes(slow) && !/^\s*\d+\s+ps\b/.test(line)) {
        try {
          process.kill(Number(line.trim().split(/\s+/)[0]), "SIGINT");
        } catch {
          // Gone meanwhile.
        }
      }
    }
    removeDataDir(join(slow, "pg"), postgresUser());
    rmSync(slow, { recursive: true, force: true });
  }
}, 90_000);

// A second Ctrl-C while `npm run dev` is stopping slowly (its tick's requeue waits on a lock) stops at once,
// PostgreSQL included: before, the process exited and left its database running (in a session of its own,
// out of the terminal's reach) with the server's file behind it.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { removeDataDir } from "../src/dev/pg-data.js";
import { postgresUser } from "../src/dev/pg-user.js";
import { FROM_SOURCE, isolatedEnv } from "./support/isolated-env.js";
import { freePort } from "./support/postgres.js";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "pgtick-dev-halt-"));
afterAll(() => {
  removeDataDir(join(dir, "pg"), postgresUser());
  rmSync(dir, { recursive: true, force: true });
});

const until = async (probe: () => boolean | Promise<boolean>, ms: number, what: string) => {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

it("stops PostgreSQL and exits 1 on a second Ctrl-C while a stop waits", async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [...FROM_SOURCE, "scripts/dev.ts"], {
    cwd: root,
    env: isolatedEnv({ DEV_DIR: dir, PORT: String(port), NO_COLOR: "1", DEV_SEED: "off" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exit = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  let locker: pg.Client | undefined;
  try {
    await until(() => output.includes("Ctrl-C stops it") || child.exitCode !== null, 60_000, "the banner");
    expect(child.exitCode, output).toBeNull();
    const info = JSON.parse(readFileSync(join(dir, "server.json"), "utf8")) as { databaseUrl: string };
    const token = (JSON.parse(readFileSync(join(dir, "secrets.json"), "utf8")) as { JOBS_API_TOKEN: string }).JOBS_API_TOKEN.split(",")[0]!.trim();
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const enqueued = await fetch(`http://127.0.0.1:${port}/api/jobs`, { method: "POST", headers, body: JSON.stringify({ job: "example.sleep", payload: { ms: 60_000 } }) });
    expect(enqueued.status).toBe(201);
    const running = async () => ((await (await fetch(`http://127.0.0.1:${port}/api/jobs?status=running`, { headers })).json()) as { items: unknown[] }).items.length === 1;
    await until(running, 20_000, "the job to run");
    // The tick's requeue, when it stops, waits on this lock.
    locker = new pg.Client({ connectionString: info.databaseUrl });
    locker.on("error", () => {});
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
    await locker?.end().catch(() => {});
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 120_000);

// `npm run dev` as a user runs it: the script in a child process with its own
// data folder, a free port and a short tick interval. It must serve the API and
// the dashboard, run jobs, stop on SIGINT with exit code 0 leaving no job
// running, and find the same data when started again.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/main.js";
import { freePort, startDevPostgres } from "../src/dev/postgres.js";
import { FROM_SOURCE, isolatedEnv } from "./support/isolated-env.js";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "pgtick-dev-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

interface Dev {
  readonly child: ChildProcess;
  output(): string;
  readonly exit: Promise<number | null>;
}

const running: Dev[] = [];
/** `npm run dev`, as its script runs it. */
const DEV_ARGS = [...FROM_SOURCE, "scripts/dev.ts"];

const startDev = async (extra: Record<string, string> = {}): Promise<Dev> => {
  const child = spawn(process.execPath, DEV_ARGS, {
    cwd: root,
    // No DATABASE_URL: the dev server's own embedded PostgreSQL, whatever the test run uses; and
    // nothing else of pgtick's from the shell (a JOBS_MODULE, DEV_SEED or DEV_PG_PORT would change what runs).
    env: isolatedEnv({ DEV_DIR: dir, PORT: String(port), TICK_INTERVAL: "500ms", NO_COLOR: "1", ...extra }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exit = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const dev: Dev = { child, output: () => output, exit };
  running.push(dev);
  await Promise.race([
    until(() => output.includes("Ctrl-C stops it"), 60_000, "the dev server's banner"),
    exit.then((code) => {
      throw new Error(`dev server exited with ${code}:\n${output}`);
    }),
  ]);
  return dev;
};

/** SIGINT, as Ctrl-C sends it; resolves with the exit code. */
const interrupt = async (dev: Dev): Promise<number | null> => {
  dev.child.kill("SIGINT");
  return dev.exit;
};

afterAll(async () => {
  for (const dev of running) if (dev.child.exitCode === null) await interrupt(dev);
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(probe: () => T | Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const secrets = () => JSON.parse(readFileSync(join(dir, "secrets.json"), "utf8")) as Record<"JOBS_API_TOKEN" | "CRON_SECRET" | "DASHBOARD_PASSWORD", string>;
const api = (path: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${secrets().JOBS_API_TOKEN}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });

const cli = async (args: string[]) => {
  let stdout = "";
  let stderr = "";
  // No DATABASE_URL and no JOBS_MODULE: the CLI finds the running dev server's through DEV_DIR.
  const code = await runCli(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: { DEV_DIR: dir }, cwd: root });
  return { code, stdout, stderr };
};

describe("npm run dev", () => {
  let reportId = "";
  let deadId = "";

  it("serves the API and the dashboard with generated tokens and runs the example jobs", async () => {
    const dev = await startDev();
    const s = secrets();
    expect(statSync(join(dir, "secrets.json")).mode & 0o777).toBe(0o600);
    expect(dev.output()).toContain("(tokens generated)");
    expect(dev.output()).toContain(`http://localhost:${port}/dashboard   password: ${s.DASHBOARD_PASSWORD}`);
    expect(dev.output()).toContain(`Authorization: Bearer ${s.JOBS_API_TOKEN}`);

    const health = await fetch(`${base}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    expect((await fetch(`${base}/api/jobs`)).status).toBe(401);
    expect((await api("/api/jobs")).status).toBe(200);

    // The failing example job is retried once, then dead-lettered: the whole life of a job.
    const dead = await until(async () => {
      const page = (await (await api("/api/dead-letters")).json()) as { items: Array<{ id: string; job: string; reason: string }> };
      return page.items.find((d) => d.job === "sync-inventory");
    }, 20_000, "the seeded failing job to be dead-lettered");
    expect(dead.reason).toBe("exhausted");
    deadId = dead.id;

    // The dashboard: a login page, then the overview behind the password.
    const redirect = await fetch(`${base}/dashboard`, { redirect: "manual" });
    expect(redirect.status).toBe(303);
    const login = await fetch(`${base}/dashboard/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('name="password"');
    const loggedIn = await fetch(`${base}/dashboard/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: base, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password: s.DASHBOARD_PASSWORD, next: "/dashboard/dead-letters" }),
    });
    expect(loggedIn.status).toBe(303);
    const cookie = loggedIn.headers.get("set-cookie")!.split(";")[0]!;
    const page = await fetch(`${base}/dashboard/dead-letters`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("sync-inventory");
  });

  it("runs a job enqueued through the API, and one enqueued by the CLI on the next scheduled tick", async () => {
    const posted = await api("/api/jobs", { method: "POST", body: JSON.stringify({ job: "send-welcome", payload: { email: "bob@example.com", name: "Bob" } }) });
    expect(posted.status).toBe(201);
    const { id } = (await posted.json()) as { id: string };
    // Finished jobs leave the queue; the run history says they succeeded.
    const succeeded = async (jobId: string) => ((await (await api(`/api/jobs/${jobId}`)).json()) as { status?: string }).status === "succeeded";
    await until(() => succeeded(id), 10_000, "the API-enqueued job to run");

    const enqueued = await cli(["enqueue", "send-welcome", '{"email":"cy@example.com","name":"Cy"}', "--json"]);
    expect(enqueued.stderr).toBe("");
    expect(enqueued.code).toBe(0);
    const cliId = (JSON.parse(enqueued.stdout) as { id: string }).id;
    await until(() => succeeded(cliId), 10_000, "the CLI-enqueued job to run on a scheduled tick");
    const stats = await cli(["stats", "--json"]);
    const minutes = (JSON.parse(stats.stdout) as { minutes: Array<{ job: string; succeeded: number }> }).minutes;
    expect(minutes.filter((m) => m.job === "send-welcome").reduce((n, m) => n + m.succeeded, 0)).toBeGreaterThanOrEqual(3);
  });

  it("stops on SIGINT with exit code 0, requeueing the job it was running", async () => {
    const posted = await api("/api/jobs", { method: "POST", body: JSON.stringify({ job: "build-report", payload: { seconds: 120 } }) });
    reportId = ((await posted.json()) as { id: string }).id;
    await until(async () => ((await (await api(`/api/jobs/${reportId}`)).json()) as { status: string }).status === "running", 10_000, "build-report to start");
    const dev = running[0]!;
    expect(await interrupt(dev)).toBe(0);
    expect(dev.output()).toContain("stopped");
    expect(dev.output()).toContain("job requeued: the tick was stopped");

    // Look at the data folder with nothing else running: nothing holds a lease.
    const pgServer = await startDevPostgres({ dir: join(dir, "pg") });
    const client = new pg.Client({ connectionString: pgServer.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT id, status, attempt, lease_owner FROM jobs_queue WHERE status = 'running' OR id = $1`, [reportId]);
      // Its attempt given back: a stop is no fault of the job's (at its last attempt it became a dead letter).
      expect(rows).toEqual([{ id: reportId, status: "queued", attempt: 0, lease_owner: null }]);
    } finally {
      await client.end();
      await pgServer.stop();
    }
  });

  it("finds the same data, tokens and dead letters when started again", async () => {
    const before = secrets();
    const dev = await startDev();
    expect(dev.output()).not.toContain("(tokens generated)");
    expect(dev.output()).not.toContain("example jobs enqueued");
    expect(secrets()).toEqual(before);
    const dead = await api(`/api/dead-letters/${deadId}`);
    expect(dead.status).toBe(200);
    expect(await dead.json()).toMatchObject({ id: deadId, job: "sync-inventory" });
    // The requeued job is picked up again by the new server's ticks: it runs again, as its first attempt.
    const attemptOf = async () => ((await (await api(`/api/jobs/${reportId}`)).json()) as { job: string; attempt: number }).attempt;
    await expect.poll(attemptOf, { timeout: 15_000, interval: 200 }).toBeGreaterThanOrEqual(1);
    // The terminal closing (SIGHUP) stops it as Ctrl-C does: before, node died at once and left its PostgreSQL running.
    dev.child.kill("SIGHUP");
    expect(await dev.exit).toBe(0);
    expect(dev.output()).toContain("stopped");
  });

  it("refuses a second dev server from the same folder, or on a port in use, before it touches anything", async () => {
    const first = running.find((d) => d.child.exitCode === null) ?? (await startDev());
    const fresh = mkdtempSync(join(tmpdir(), "pgtick-dev-fresh-"));
    const attempt = async (env: Record<string, string>) => {
      const child = spawn(process.execPath, DEV_ARGS, { cwd: root, env: isolatedEnv(env), stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      return { code: await new Promise<number | null>((done) => child.once("exit", done)), stderr };
    };
    // The same folder on another port: it would have stopped the first one's PostgreSQL.
    const same = await attempt({ DEV_DIR: dir, PORT: String(await freePort()) });
    expect(same.code).toBe(1);
    expect(same.stderr).toContain(`is in use by the dev server at`);
    // A taken port with a fresh folder: refused before a database is made or migrated.
    const taken = await attempt({ DEV_DIR: fresh, PORT: String(port) });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`PORT ${port} is in use`);
    expect(existsSync(join(fresh, "pg"))).toBe(false);
    // The embedded PostgreSQL's port taken: named, before anything is made (PostgreSQL only said it shut down).
    const pgTaken = await attempt({ DEV_DIR: fresh, PORT: String(await freePort()), DEV_PG_PORT: String(port) });
    expect(pgTaken.code).toBe(1);
    expect(pgTaken.stderr).toContain(`DEV_PG_PORT ${port} is in use`);
    expect(existsSync(join(fresh, "pg"))).toBe(false);
    // A HOST that is no address of this machine: named as the setting (it was "cannot connect to the database").
    for (const host of ["nonexistent.invalid", "10.9.8.7"]) {
      const badHost = await attempt({ DEV_DIR: fresh, PORT: String(await freePort()), HOST: host });
      expect(badHost.code).toBe(1);
      expect(badHost.stderr).toContain(`HOST ${host} is not an address of this machine`);
      expect(existsSync(join(fresh, "pg"))).toBe(false);
    }
    rmSync(fresh, { recursive: true, force: true });
    expect((await fetch(`${base}/api/health`)).status).toBe(200);
    expect(first.child.exitCode).toBeNull();
  });

  it("says in one line why it cannot start", async () => {
    const child = spawn(process.execPath, DEV_ARGS, {
      cwd: root,
      env: isolatedEnv({ DEV_DIR: dir, TICK_INTERVAL: "often" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code).toBe(1);
    expect(stderr).toBe('dev: TICK_INTERVAL must be a duration of at least 100 ms such as 30s, 2m or 1500 (milliseconds), at most 24 days, got "often"\n');
    // A library setting each variable's parser takes but the settings refuse as a whole: refused before PostgreSQL starts
    // (it started PostgreSQL, then failed), in a folder of its own that stays without a database.
    const fresh = mkdtempSync(join(tmpdir(), "pgtick-dev-settings-"));
    try {
      // PORT 0: with `npm run dev` running beside the tests, the default port is taken, and that was said first.
      const refused = spawn(process.execPath, DEV_ARGS, { cwd: root, env: isolatedEnv({ DEV_DIR: fresh, PORT: "0", JOBS_CONCURRENCY: "10001" }), stdio: ["ignore", "pipe", "pipe"] });
      let said = "";
      refused.stderr!.on("data", (d: Buffer) => (said += d.toString()));
      expect(await new Promise<number | null>((done) => refused.once("exit", done))).toBe(1);
      expect(said).toMatch(/^dev: JOBS_CONCURRENCY must be /);
      expect(existsSync(join(fresh, "pg"))).toBe(false);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("says the dashboard is closed, and why, instead of printing a password it refuses", async () => {
    for (const dev of running) if (dev.child.exitCode === null) await interrupt(dev);
    const dev = await startDev({ DASHBOARD_PASSWORD: "short" });
    expect(dev.output()).toContain("/dashboard   closed: DASHBOARD_PASSWORD is shorter than 12 characters.");
    expect(dev.output()).not.toContain("password: short");
    expect(await interrupt(dev)).toBe(0);
  });

  it("prints the tokens and password as the app reads them: trimmed, one token of a rotation list (its curl got a 401)", async () => {
    for (const dev of running) if (dev.child.exitCode === null) await interrupt(dev);
    const [oldToken, newToken] = ["old-token-0123456789abcdefghijklmnop", "new-token-0123456789abcdefghijklmnop"];
    const dev = await startDev({ JOBS_API_TOKEN: ` ${oldToken} , ${newToken} `, CRON_SECRET: "  cron-secret-0123456789abcdefghijkl  ", DASHBOARD_PASSWORD: "  a padded password  " });
    expect(dev.output()).toContain(`Authorization: Bearer ${oldToken}\n`);
    expect(dev.output()).toContain(`-H "Authorization: Bearer ${oldToken}"`);
    expect(dev.output()).toContain("Authorization: Bearer cron-secret-0123456789abcdefghijkl   (also every");
    expect(dev.output()).toContain("/dashboard   password: a padded password\n");
    expect((await fetch(`${base}/api/jobs`, { headers: { authorization: `Bearer ${oldToken}` } })).status).toBe(200);
    expect(await interrupt(dev)).toBe(0);
  });
});

// An idle connection killed by the server (pg_terminate_backend, a restart) must not end the
// process: the library listens for the pool's `error` events on the pools it is given or opens.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { fromPg } from "../src/index.js";
import { harness } from "./support/harness.js";
import { startWsProxy } from "./support/ws-proxy.js";

const h = await harness("poolerr");
const fixture = fileURLToPath(new URL("./fixtures/pool-error.fixture.ts", import.meta.url));
const proxy = await startWsProxy();
afterAll(() => proxy.close());

const survives = async (mode: "pg" | "neon") => {
  const setup = await h.isolated([]);
  const url = h.url;
  const child = spawn(process.execPath, ["--import", "tsx", fixture, mode, url, setup.settings.tablePrefix, `127.0.0.1:${proxy.port}`], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await expect.poll(() => out.includes("idle") || child.exitCode !== null, { timeout: 20_000 }).toBe(true);
  // Every other connection to this file's database: the child's idle ones among them (the harness's pools listen).
  const killed = await h.rows<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  child.stdin.write("go\n");
  const code = await exited;
  return { code, out, err, killed: killed[0]!.n };
};

it("node-postgres Pool without a listener: the process lives on", async () => {
  const r = await survives("pg");
  expect(r.killed).toBeGreaterThan(0);
  expect(r.err).not.toContain("Unhandled 'error' event");
  expect(r.out).toContain("alive");
  expect(r.code).toBe(0);
}, 30_000);

it("the platform's Neon Pool (the worker's tick): the process lives on", async () => {
  const r = await survives("neon");
  expect(r.killed).toBeGreaterThan(0);
  expect(r.err).not.toContain("Unhandled 'error' event");
  expect(r.out).toContain("alive");
  expect(r.code).toBe(0);
}, 30_000);

it("bounded statements whose backends are killed while in use: the process lives on, and the pool serves after", async () => {
  const fixture = fileURLToPath(new URL("./fixtures/pool-in-use.fixture.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", fixture, h.url, "4"], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  expect(err).not.toMatch(/terminating connection|Unhandled 'error' event/);
  expect(code).toBe(0);
  const [, ok, failed] = /survived (\d+) (\d+)/.exec(out) ?? [];
  // Statements both went through and were cut: the kills landed while clients were in use.
  expect(Number(ok)).toBeGreaterThan(0);
  expect(Number(failed)).toBeGreaterThan(0);
}, 60_000);

it("passes a connection that comes after its statement gave up on to the next waiter: a stall left 20 throwaway connections, opened one after another", async () => {
  const pool = new pg.Pool({ connectionString: h.url, max: 1 });
  let opened = 0;
  pool.on("connect", () => void opened++);
  const db = fromPg(pool);
  try {
    // The pool's one connection is busy; twenty statements give up waiting for it.
    const busy = pool.query("SELECT pg_sleep(0.5)");
    const waiting = Array.from({ length: 20 }, () => db.query("SELECT 1", [], { timeoutMs: 100 }).then(() => "ran", (e: Error) => e.name));
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(["StatementTimeout"]));
    await busy;
    expect((await db.query("SELECT 1 AS one", [], { timeoutMs: 5_000 })).rows).toEqual([{ one: 1 }]);
    // The late checkouts come back one after another after the answer above: wait for them to settle.
    await new Promise((r) => setTimeout(r, 500));
    expect(opened).toBe(1);
  } finally {
    await pool.end();
  }
});

it("leaves no timer behind for a run it gave up on: a job's timeout kept the process alive for that long after the tick returned", async () => {
  const setup = await h.isolated([]);
  const fixture = fileURLToPath(new URL("./fixtures/abandoned-timeout.fixture.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", fixture, h.url, setup.settings.tablePrefix], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on("exit", resolve));
  expect(JSON.parse(out)).toEqual({ requeued: 1, active: expect.not.arrayContaining(["Timeout"]) });
}, 30_000);

it("reports a statement's whole bound when the wait for a connection took most of it, and sends none with almost nothing left", async () => {
  const pool = new pg.Pool({ connectionString: h.url, max: 1 });
  const db = fromPg(pool);
  try {
    const busy = pool.query("SELECT pg_sleep(0.48)");
    await new Promise((r) => setTimeout(r, 20));
    // It gets the connection with about 20 ms of its 500 left: it said "within 20 ms".
    const e = await db.query("SELECT pg_sleep(0.2)", [], { timeoutMs: 500 }).catch((x: unknown) => x);
    await busy;
    expect(e).toMatchObject({ name: "StatementTimeout", timeoutMs: 500 });
    // The connection was not destroyed for it: the pool answers on it.
    expect((await db.query("SELECT 1 AS one", [], { timeoutMs: 5_000 })).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
  }
});

// A database out of reach through each driver reads as "unavailable" (503, try again), never as an
// internal error: the Neon Pool rejects a WebSocket that fails to open with an ErrorEvent, not an
// Error, and Neon's HTTP driver reports a failed fetch or an HTTP 5xx without a SQLSTATE.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { neon, neonConfig, Pool as NeonPool } from "@neondatabase/serverless";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import ws from "ws";
import { databaseUnavailable } from "../src/db.js";
import { misconfiguration } from "../src/errors.js";
import { nodeNeonPool } from "../src/platform/neon.js";
import { fromNeonHttp, fromPg } from "../src/index.js";
import { freePort } from "./support/postgres.js";

const servers: Server[] = [];
afterAll(() => servers.forEach((s) => s.close()));

const rejection = (work: Promise<unknown>) => work.then(() => undefined, (e: unknown) => e);

describe("a database out of reach, through each driver", () => {
  it("the Neon Pool's ErrorEvent becomes an Error that says the database is unavailable", async () => {
    const port = await freePort();
    neonConfig.webSocketConstructor = ws;
    neonConfig.wsProxy = () => `127.0.0.1:${port}/v1`;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineTLS = false;
    neonConfig.pipelineConnect = false;
    const pool = new NeonPool({ connectionString: "postgres://u:p@db.example/test", max: 1 });
    pool.on("error", () => {});
    const error = await rejection(fromPg(pool).query("SELECT 1"));
    expect(error).toBeInstanceOf(Error);
    expect(databaseUnavailable(error)).toBe(true);
    await pool.end().catch(() => {});
  });

  it("a Neon Pool on a runtime with no WebSocket (Node 20, none set) is a misconfiguration said as such, not a network failure (a 500 with a stack)", async () => {
    const given = neonConfig.webSocketConstructor;
    const own = (globalThis as { WebSocket?: unknown }).WebSocket;
    neonConfig.webSocketConstructor = undefined;
    delete (globalThis as { WebSocket?: unknown }).WebSocket;
    try {
      const error = (() => { try { nodeNeonPool({ DATABASE_URL: "postgres://u:p@db.example/test" }); } catch (e) { return e; } })();
      expect(error).toMatchObject({ code: "invalid_config", message: expect.stringMatching(/no WebSocket for Neon's Pool: use Node 22 or later, or set neonConfig.webSocketConstructor/) });
      expect(misconfiguration(error)).toBe("");
    } finally {
      neonConfig.webSocketConstructor = given;
      if (own !== undefined) (globalThis as { WebSocket?: unknown }).WebSocket = own;
    }
  });

  it("Neon HTTP: a fetch that fails and an endpoint answering 503 say the database is unavailable; a SQL error stays one", async () => {
    const closed = await freePort();
    neonConfig.fetchEndpoint = () => `http://127.0.0.1:${closed}/sql`;
    const down = neon(`postgres://u:p@127.0.0.1:${closed}/test`);
    const refused = await rejection(fromNeonHttp(down).query("SELECT 1"));
    expect(databaseUnavailable(refused)).toBe(true);

    const failing = createServer((_, res) => res.writeHead(503, { "content-type": "text/plain" }).end("upstream down"));
    servers.push(failing);
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    const port = (failing.address() as AddressInfo).port;
    neonConfig.fetchEndpoint = () => `http://127.0.0.1:${port}/sql`;
    const five = neon(`postgres://u:p@127.0.0.1:${port}/test`);
    const answered503 = await rejection(fromNeonHttp(five).query("SELECT 1"));
    expect(databaseUnavailable(answered503)).toBe(true);

    const sqlError = Object.assign(new Error('relation "nope" does not exist'), { code: "42P01" });
    const wrong = await rejection(fromNeonHttp({ query: () => Promise.reject(sqlError) }).query("SELECT * FROM nope"));
    expect(wrong).toBe(sqlError);
  });

  it("a pool wrapped with fromPg still gets createJobs' listener for its idle connections' errors", async () => {
    const pool = new pg.Pool({ connectionString: "postgres://127.0.0.1:1/none" });
    const { createJobs } = await import("../src/index.js");
    createJobs({ db: fromPg(pool, { prepare: false }), jobs: [] });
    expect(pool.listenerCount("error")).toBe(1);
    await pool.end();
  });
});

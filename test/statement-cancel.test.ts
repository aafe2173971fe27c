// A statement given up on at its bound is cancelled on the server too: one left waiting on a lock
// would run when the lock frees, and its claim would hold jobs no tick runs until their leases expire.
import { createServer, type Socket } from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cancelOnServer } from "../src/db-cancel.js";
import { defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";
import { startStallProxy } from "./support/stall-proxy.js";

const h = await harness("statement_cancel");
const job = defineJob({ name: "job", schema: z.object({ n: z.number() }), handler: () => {} });

describe("a statement given up on at its bound", () => {
  it("does not go on waiting on the server, and claims nothing when the lock it waited on frees", async () => {
    const jobs = await h.isolated([job], { maxTicks: 2, concurrency: 5 });
    const prefix = jobs.settings.tablePrefix;
    await jobs.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ job: "job" as const, payload: { n } })));
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE ${prefix}queue IN ACCESS EXCLUSIVE MODE`);
      const failed = await jobs.tick({ budgetMs: 600, graceMs: 200 }).then(() => undefined, (e: unknown) => e);
      expect((failed as Error).name).toBe("StatementTimeout");
      // The tick's statement no longer waits behind the lock.
      await expect.poll(async () => (await h.rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
        [(holder as unknown as { processID: number }).processID],
      ))[0]!.n, { timeout: 3_000, interval: 50 }).toBe(0);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    await sleep(300);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}queue WHERE status = 'running'`)).toEqual([{ n: 0 }]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}ticks WHERE expires_at > now()`)).toEqual([{ n: 0 }]);
    // And the next tick runs them all.
    expect(await jobs.tick({ budgetMs: 3_000 })).toMatchObject({ succeeded: 10 });
  }, 20_000);

  it("nor does one whose connection was cut while it waited: it is cancelled on the server, and claims nothing", async () => {
    const setup = await h.isolated([job], { concurrency: 5 });
    const prefix = setup.settings.tablePrefix;
    await setup.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ job: "job" as const, payload: { n } })));
    const proxy = await startStallProxy(h.url);
    const pool = h.pool(2);
    const cut = new pg.Pool({ connectionString: proxy.url, max: 2 });
    cut.on("error", () => {});
    const jobs = h.make([job], { tablePrefix: prefix, concurrency: 5 }, cut);
    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE ${prefix}queue IN ACCESS EXCLUSIVE MODE`);
      const tick = jobs.tick({ budgetMs: 5_000 }).then(() => undefined, (e: unknown) => e);
      // The tick's first statement waits behind the lock; then the network between them goes.
      await expect.poll(async () => (await h.rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0]!.n,
      { timeout: 3_000, interval: 20 }).toBe(1);
      proxy.cut();
      expect(await tick).toBeInstanceOf(Error);
      await expect.poll(async () => (await h.rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0]!.n,
      { timeout: 3_000, interval: 50 }).toBe(0);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
      await cut.end();
      await proxy.close();
    }
    await sleep(300);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}queue WHERE status = 'running'`)).toEqual([{ n: 0 }]);
  }, 20_000);

  // A server that takes the cancel request's connection and never closes it kept the connection, and so a
  // CLI process that had given up on a statement, alive until the operating system gave up (minutes).
  it("sends the cancel request on a connection that keeps no process alive", async () => {
    const accepted: Socket[] = [];
    const silent = createServer((socket) => {
      socket.unref();
      accepted.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    silent.unref();
    const tcp = () => process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;
    try {
      const before = tcp();
      const client = Object.assign(Object.create(pg.Client.prototype) as object, {
        processID: 1,
        secretKey: 1,
        connectionParameters: { host: "127.0.0.1", port: (silent.address() as { port: number }).port },
      });
      cancelOnServer(client);
      await expect.poll(() => accepted.length).toBe(1);
      expect(tcp()).toBe(before);
    } finally {
      for (const s of accepted) s.destroy();
      silent.close();
    }
  });
});

// A frozen network cannot hold a tick past its budget: every statement it sends is bounded by
// the time left plus the grace, on node-postgres, on the Neon Pool and on Neon's HTTP driver.
import { neon, neonConfig } from "@neondatabase/serverless";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, type Db, defineJob, fromNeonHttp, fromPg, memoryLogger } from "../src/index.js";
import { StatementTimeout } from "../src/db.js";
import { harness } from "./support/harness.js";
import { neonPool } from "./support/neon.js";
import { startNeonHttp } from "./support/neon-http.js";
import { startStallProxy, type StallProxy } from "./support/stall-proxy.js";
import { startWsProxy } from "./support/ws-proxy.js";

const h = await harness("stall");
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
});

const BUDGET = 1_500;
const GRACE = 1_000;

/** A tick whose handler freezes the network under it: the settle statement then never gets an answer. */
const stalledTick = async (proxy: StallProxy, db: Db, prefix: string) => {
  const freeze = defineJob({ name: "freeze", schema: z.object({}), handler: () => proxy.freeze() });
  const jobs = createJobs({ db, jobs: [freeze], logger: memoryLogger(), settings: { tablePrefix: prefix, leaseMarginMs: 1_000, graceMs: GRACE } });
  const started = Date.now();
  const outcome = await jobs.tick({ budgetMs: BUDGET }).then(
    (report) => ({ report, error: undefined }),
    (error: unknown) => ({ report: undefined, error }),
  );
  const elapsed = Date.now() - started;
  proxy.thaw();
  return { ...outcome, elapsed };
};

const prepared = async (label: string) => {
  const freeze = defineJob({ name: "freeze", schema: z.object({}), handler: () => {} });
  const setup = await h.isolated([freeze]);
  await setup.enqueue("freeze", {});
  const proxy = await startStallProxy(h.url);
  closers.push(() => proxy.close());
  return { proxy, prefix: setup.settings.tablePrefix, label };
};

describe.concurrent("a network that freezes mid-tick", () => {
  it("node-postgres: the tick gives up on the stalled statement and returns within its budget plus the grace", async () => {
    const { proxy, prefix } = await prepared("pg");
    const pool = new pg.Pool({ connectionString: proxy.url, max: 4 });
    pool.on("error", () => {});
    closers.push(() => pool.end());
    const r = await stalledTick(proxy, fromPg(pool), prefix);
    expect(r.error).toBeInstanceOf(StatementTimeout);
    expect(r.elapsed).toBeLessThan(BUDGET + GRACE + 1_500);
  });

  it("the Neon Pool over WebSocket", async () => {
    const { proxy, prefix } = await prepared("neon-pool");
    const ws = await startWsProxy();
    closers.push(() => ws.close());
    const pool = neonPool(proxy.url, ws, 4);
    pool.on("error", () => {});
    closers.push(() => pool.end());
    const r = await stalledTick(proxy, fromPg(pool), prefix);
    expect(r.error).toBeInstanceOf(StatementTimeout);
    expect(r.elapsed).toBeLessThan(BUDGET + GRACE + 1_500);
    expect(ws.connections()).toBeGreaterThan(0);
  });

  it("Neon's HTTP driver: the request is aborted", async () => {
    const { proxy, prefix } = await prepared("neon-http");
    // The SQL-over-HTTP stand-in connects to the URL neon() names: the freezing proxy, so its answers stall.
    const endpoint = await startNeonHttp();
    closers.push(() => endpoint.close());
    neonConfig.fetchEndpoint = endpoint.endpoint;
    const r = await stalledTick(proxy, fromNeonHttp(neon(proxy.url)), prefix);
    expect(r.error).toBeInstanceOf(StatementTimeout);
    expect(r.elapsed).toBeLessThan(BUDGET + GRACE + 1_500);
    expect(endpoint.statements).toBeGreaterThan(0);
  });
});

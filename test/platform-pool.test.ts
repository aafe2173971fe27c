// The platforms' pools hold one tick's statements: a connection the pool closes while the tick waits for
// its runs has to be opened again (on Workers, one more subrequest of the invocation's few; refused, the
// tick's runs stayed running after their handlers had finished).
import { neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, expect, it } from "vitest";
import ws from "ws";
import { z } from "zod";
import { createJobs, defineJob, silentLogger } from "../src/index.js";
import { neonPool } from "../src/platform/neon.js";
import { harness, sleep } from "./support/harness.js";
import { startWsProxy, type WsProxy } from "./support/ws-proxy.js";

const h = await harness("platform_pool");
let proxy: WsProxy;
beforeAll(async () => {
  // Node 20 has no global WebSocket (workerd does).
  neonConfig.webSocketConstructor = ws;
  proxy = await startWsProxy();
});
afterAll(() => proxy.close());

it("keeps a tick's one connection while its runs go on past the driver's idle timeout (10 s): it opened a second", async () => {
  const setup = await h.isolated([]);
  const slow = defineJob({ name: "slow", schema: z.object({}), handler: () => sleep(11_000) });
  const connection = neonPool({ DATABASE_URL: h.url, NEON_LOCAL_WSPROXY: `127.0.0.1:${proxy.port}` }, 1);
  const jobs = createJobs({ db: connection.db, jobs: [slow], logger: silentLogger, settings: { tablePrefix: setup.settings.tablePrefix } });
  try {
    const before = proxy.connections();
    await jobs.enqueue("slow", {});
    // Its one slot busy, the tick sends nothing while the run goes on.
    expect(await jobs.tick({ budgetMs: 20_000, concurrency: 1 })).toMatchObject({ succeeded: 1 });
    // The enqueue's connection carried the tick's statements too.
    expect(proxy.connections() - before).toBe(1);
  } finally {
    await connection.close();
  }
}, 40_000);

// A database that takes the connection and never answers (a frozen host, a proxy with no backend): the tick
// invocation must still end within its platform limit, so the platform sees an error, not a timeout that
// holds (and bills) every cron minute until the platform kills it.
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { errorText } from "../src/error-text.js";
import { defineJob } from "../src/index.js";
import { VERCEL_TICK } from "../src/platform/budget.js";
import { type Deployment, runInvocationTick } from "../src/platform/invocation.js";
import { pgPool } from "../src/platform/pg.js";

let server: Server;
let port = 0;
const sockets: Socket[] = [];
beforeAll(async () => {
  server = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("a database that never answers", () => {
  it("fails the tick invocation within the platform limit (6 s here), its pool left to its connect timeout", async () => {
    const job = defineJob({ name: "noop", schema: z.object({}), handler: () => {} });
    const d: Deployment = {
      module: { jobs: [job] },
      env: { DATABASE_URL: `postgres://nobody@127.0.0.1:${port}/none`, JOBS_PLATFORM_LIMIT: "6s", JOBS_SAFETY_MARGIN: "2s" },
      platform: () => VERCEL_TICK,
      connect: (env) => pgPool(env),
    };
    const started = Date.now();
    const outcome = await runInvocationTick(d, {}).then(
      () => "answered",
      (error: unknown) => errorText(error),
    );
    const tookMs = Date.now() - started;
    expect(outcome).toMatch(/^StatementTimeout/);
    expect(sockets.length).toBeGreaterThan(0);
    expect(tookMs).toBeLessThan(6_000);
  });
});

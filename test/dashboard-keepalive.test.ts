// A dashboard form refused for its size must not break the kept-alive connection it came on, as the
// API's bodies do not (http-keepalive.test.ts): its body is read off within twice the form's limit,
// or the answer says `Connection: close`. Served through @hono/node-server, mounted by createApp (as
// `npm run dev` serves it) and on its own.
import http from "node:http";
import { type AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { afterAll, describe, expect, it } from "vitest";
import { createDashboard } from "../src/dashboard/dashboard-app.js";
import { createApp } from "../src/http/index.js";
import { fixtureJobs, PASSWORD } from "./support/browser.js";
import { harness } from "./support/harness.js";
import { type Answer, oneSocket, sendOn } from "./support/keepalive.js";

const h = await harness("dash_keepalive");
const jobs = h.make(fixtureJobs().defs);
const env = { DASHBOARD_PASSWORD: PASSWORD, JOBS_API_TOKEN: "api-token-for-tests-0123456789abcdef" };

const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise<void>((resolve) => (s.close(() => resolve()), s.closeAllConnections()));
});
const listen = async (fetch: (req: Request) => Response | Promise<Response>) => {
  const server = createAdaptorServer({ fetch }) as http.Server;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
};

const mounts = [
  ["mounted by createApp", async () => ({ port: await listen(createApp({ jobs, env }).fetch), base: "/dashboard" })],
  ["on its own", async () => ({ port: await listen(createDashboard({ jobs, env, basePath: "/" }).fetch), base: "" })],
] as const;

describe.each(mounts)("the dashboard %s", (_, serve) => {
  const setup = async () => {
    const { port, base } = await serve();
    const form = { "content-type": "application/x-www-form-urlencoded", origin: `http://127.0.0.1:${port}` };
    const send = sendOn(() => port, form);
    const agent = oneSocket();
    const login = await send(agent, "POST", `${base}/login`, {}, new URLSearchParams({ password: PASSWORD, next: `${base}/` }).toString());
    expect(login.status).toBe(303);
    const cookie = String(login.headers["set-cookie"]).split(";")[0]!;
    agent.destroy();
    const nextIsAnswered = async (agent: http.Agent, first: Answer, sameSocket: boolean) => {
      const next = await send(agent, "GET", `${base}/login`, {});
      expect(next.status).toBe(200);
      if (sameSocket) expect(next.localPort).toBe(first.localPort);
    };
    return { base, send, cookie, nextIsAnswered };
  };

  it("a login form past its limit (chunked): 413, read off, and the next request on the same socket is answered", async () => {
    const { base, send, nextIsAnswered } = await setup();
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", `${base}/login`, {}, { chunks: 20, size: 1_024 });
      expect({ status: first.status, connection: first.headers.connection }).toEqual({ status: 413, connection: "keep-alive" });
      await nextIsAnswered(agent, first, true);
    } finally {
      agent.destroy();
    }
  });

  it("a session's form past its limit (chunked): 413, read off, and the next request on the same socket is answered", async () => {
    const { base, send, cookie, nextIsAnswered } = await setup();
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", `${base}/dead-letters/discard`, { cookie }, { chunks: 144, size: 65_536 });
      expect({ status: first.status, connection: first.headers.connection }).toEqual({ status: 413, connection: "keep-alive" });
      expect(first.body).toContain("This form is larger than the dashboard takes");
      await nextIsAnswered(agent, first, true);
    } finally {
      agent.destroy();
    }
  });

  it("a login form far past what is read off: 413 with Connection: close, and the next request is answered", async () => {
    const { base, send, nextIsAnswered } = await setup();
    const agent = oneSocket();
    try {
      // The server may close while this client still writes: node:http then reports its own write failing.
      const first = await send(agent, "POST", `${base}/login`, {}, { chunks: 600, size: 1_024 }).catch((e: NodeJS.ErrnoException) => e);
      if (first instanceof Error) expect(["EPIPE", "ECONNRESET"]).toContain(first.code);
      else expect({ status: first.status, connection: first.headers.connection }).toEqual({ status: 413, connection: "close" });
      await nextIsAnswered(agent, first as Answer, false);
    } finally {
      agent.destroy();
    }
  });
});

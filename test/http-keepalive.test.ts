// A request the app refuses before reading its body (415, 413) must not break the
// keep-alive connection it came on: the next request on the same socket is answered.
// Served through @hono/node-server, as `npm run dev` and the README's `serve()` do.
import { type AddressInfo } from "node:net";
import http from "node:http";
import { createAdaptorServer, serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { drainBound } from "../src/body-drain.js";
import { defineJob } from "../src/index.js";
import { API_TOKENS, NEW_TOKEN } from "./http-support.js";
import { harness } from "./support/harness.js";
import { type Answer, oneSocket, sendOn } from "./support/keepalive.js";

const h = await harness("http_keepalive");
const ping = defineJob({ name: "ping", schema: z.object({ n: z.number().int() }), handler: () => {} });
const jobs = h.make([ping]);
const LIMIT = 1_048_576;
const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, JOBS_MAX_BODY_BYTES: String(LIMIT) } });

let server: http.Server;
let port = 0;
beforeAll(async () => {
  server = createAdaptorServer({ fetch: app.fetch }) as http.Server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
});

const send = sendOn(() => port, { authorization: `Bearer ${NEW_TOKEN}` });

const nextIsAnswered = async (agent: http.Agent, first: Answer) => {
  const next = await send(agent, "GET", "/api/stats", {});
  expect(next.status).toBe(200);
  expect(JSON.parse(next.body)).toHaveProperty("queue");
  // The same connection carried it: the refusal left nothing unread on it.
  expect(next.localPort).toBe(first.localPort);
  return next;
};

describe("a body refused before it is read keeps the connection usable", () => {
  it("415 for a 400 kB text/plain body: drained, and the next request on the same socket is answered", async () => {
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", "/api/jobs", { "content-type": "text/plain" }, "x".repeat(400_000));
      expect(first.status).toBe(415);
      expect(JSON.parse(first.body).error.code).toBe("unsupported_media_type");
      expect(first.headers.connection).toBe("keep-alive");
      await nextIsAnswered(agent, first);
    } finally {
      agent.destroy();
    }
  });

  it("413 for a chunked body past the limit: drained, and the next request on the same socket is answered", async () => {
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", "/api/jobs", { "content-type": "application/json" }, { chunks: 96, size: 16_384 });
      expect(first.status).toBe(413);
      expect(JSON.parse(first.body).error.code).toBe("payload_too_large");
      expect(first.headers.connection).toBe("keep-alive");
      await nextIsAnswered(agent, first);
    } finally {
      agent.destroy();
    }
  });

  it("413 for a declared Content-Length over the limit: drained, and the next request on the same socket is answered", async () => {
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", "/api/jobs", { "content-type": "application/json" }, Buffer.alloc(LIMIT + 200_000, "a"));
      expect(first.status).toBe(413);
      expect(JSON.parse(first.body).error.code).toBe("payload_too_large");
      expect(first.headers.connection).toBe("keep-alive");
      await nextIsAnswered(agent, first);
    } finally {
      agent.destroy();
    }
  });

  it("401 for a body sent with a wrong token: drained, and the next request on the same socket is answered", async () => {
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", "/api/jobs", { "content-type": "application/json", authorization: "Bearer wrong-token-0000000" }, Buffer.alloc(300_000, "a"));
      expect(first.status).toBe(401);
      expect(first.headers.connection).toBe("keep-alive");
      await nextIsAnswered(agent, first);
    } finally {
      agent.destroy();
    }
  });

  it("a small refused body (415), then an enqueue on the same socket succeeds", async () => {
    const agent = oneSocket();
    try {
      const first = await send(agent, "POST", "/api/jobs", { "content-type": "text/plain" }, "hello");
      expect(first.status).toBe(415);
      const ok = await send(agent, "POST", "/api/jobs", { "content-type": "application/json" }, JSON.stringify({ job: "ping", payload: { n: 1 } }));
      expect(ok.status).toBe(201);
      expect(ok.localPort).toBe(first.localPort);
    } finally {
      agent.destroy();
    }
  });
});

describe("served with serve() as the README shows", () => {
  it("415 for a 400 kB text/plain body, then the next request on the same socket is answered", async () => {
    const served = await new Promise<{ server: http.Server; port: number }>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve({ server: s as http.Server, port: info.port }));
    });
    const agent = oneSocket();
    const at = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; localPort?: number }>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port: served.port, method, path, agent, headers: { authorization: `Bearer ${NEW_TOKEN}`, ...headers } });
        req.on("error", reject);
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, localPort: req.socket?.localPort }));
        });
        req.end(body);
      });
    try {
      const first = await at("POST", "/api/jobs", { "content-type": "text/plain" }, "x".repeat(400_000));
      expect(first.status).toBe(415);
      const next = await at("GET", "/api/stats", {});
      expect(next).toEqual({ status: 200, localPort: first.localPort });
    } finally {
      agent.destroy();
      await new Promise<void>((resolve) => {
        served.server.close(() => resolve());
        served.server.closeAllConnections();
      });
    }
  });
});

describe("a body too large to drain closes the connection, and says so", () => {
  /** Bytes the server took off each connection, so a test can see the body was not read whole. */
  const readByServer: number[] = [];
  beforeAll(() => {
    server.on("connection", (s) => s.on("close", () => readByServer.push(s.bytesRead)));
  });
  const HUGE = 64 * 1_048_576;

  // Slack for what sits in stream buffers when the reading stops.
  const SLACK = 1_048_576;
  const hugeBodies: Array<[string, () => BodyInit, number]> = [
    // Streamed without a length: read up to the limit, then discarded up to the drain bound, then closed.
    ["a chunked body", () => new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(65_536)) }), drainBound(LIMIT) + SLACK],
    // Announced far past the drain bound: refused without reading the body.
    ["a declared Content-Length", () => new Uint8Array(HUGE), SLACK],
  ];

  it.each(hugeBodies)("413 with Connection: close for %s far past the drain bound (fetch), then the next request is answered", async (_, body, mostRead) => {
    readByServer.length = 0;
    const url = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${NEW_TOKEN}` };
    const first = await fetch(`${url}/api/jobs`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: body(),
      duplex: "half",
    } as RequestInit);
    expect(first.status).toBe(413);
    expect(first.headers.get("connection")).toBe("close");
    expect((await first.json()).error.code).toBe("payload_too_large");
    const next = await fetch(`${url}/api/stats`, { headers: auth });
    expect(next.status).toBe(200);
    expect(await next.json()).toHaveProperty("queue");
    // The refused connection is gone, and only a bounded part of the body was read off it.
    await expect.poll(() => readByServer.length).toBeGreaterThan(0);
    expect(Math.max(...readByServer)).toBeLessThan(mostRead);
  });

  it("on a one-socket agent, the request after a body past the drain bound is answered on a new connection", async () => {
    const agent = oneSocket();
    try {
      // The server closes as it announced while this client is still writing: node:http may then report
      // its own write failing (EPIPE, ECONNRESET) instead of the 413 it was answered; either way the socket is gone.
      const first = await send(agent, "POST", "/api/jobs", { "content-type": "application/json" }, { chunks: 4_096, size: 16_384 }).catch(
        (e: NodeJS.ErrnoException) => e,
      );
      if (first instanceof Error) expect(["EPIPE", "ECONNRESET"]).toContain(first.code);
      else expect({ status: first.status, connection: first.headers.connection }).toEqual({ status: 413, connection: "close" });
      const next = await send(agent, "GET", "/api/stats", {});
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});

// A WebSocket-to-TCP proxy in front of the local PostgreSQL, the role Neon's
// wsproxy plays in production: the Neon driver's Pool opens a WebSocket to
// `ws://127.0.0.1:<port>/v2?address=host:port` and speaks the Postgres wire
// protocol through it. Used by the Neon adapter tests and inside Miniflare.
import { createConnection } from "node:net";
import { WebSocketServer } from "ws";

export interface WsProxy {
  readonly port: number;
  /** WebSocket connections accepted so far: proof that a client really went through the proxy. */
  readonly connections: () => number;
  /** The value for `neonConfig.wsProxy`. */
  readonly wsProxy: (host: string, port: number | string) => string;
  close(): Promise<void>;
}

export const startWsProxy = async (): Promise<WsProxy> => {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  let connections = 0;
  server.on("connection", (socket, request) => {
    connections++;
    const address = new URL(request.url ?? "/", "http://proxy").searchParams.get("address") ?? "";
    const [host, port] = address.split(":");
    // Only loopback targets: this proxy exists for tests on this machine.
    if (!host || !port || !["127.0.0.1", "localhost", "::1"].includes(host)) {
      socket.close(1008, "address not allowed");
      return;
    }
    const tcp = createConnection({ host, port: Number(port) });
    const early: Buffer[] = [];
    let connected = false;
    tcp.on("connect", () => {
      connected = true;
      for (const chunk of early) tcp.write(chunk);
      early.length = 0;
    });
    socket.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
      const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (connected) tcp.write(chunk);
      else early.push(chunk);
    });
    tcp.on("data", (chunk) => socket.readyState === socket.OPEN && socket.send(chunk));
    tcp.on("close", () => socket.close());
    tcp.on("error", () => socket.close());
    socket.on("close", () => tcp.destroy());
    socket.on("error", () => tcp.destroy());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    connections: () => connections,
    wsProxy: (host, p) => `127.0.0.1:${port}/v2?address=${host}:${p}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
};

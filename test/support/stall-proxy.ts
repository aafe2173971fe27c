// A TCP proxy in front of the test PostgreSQL that can stop forwarding bytes, as a network that
// freezes mid-request does (no reset, no close: the bytes simply stop arriving until it thaws).
import { createConnection, createServer, type Socket } from "node:net";

export interface StallProxy {
  /** postgres://... through the proxy */
  readonly url: string;
  readonly port: number;
  /** Stops forwarding in both directions; what arrives meanwhile is held. */
  freeze(): void;
  /** Forwards what was held and everything after. */
  thaw(): void;
  /** Cuts every connection open now, both ways (new ones go through). */
  cut(): void;
  close(): Promise<void>;
}

export const startStallProxy = async (targetUrl: string): Promise<StallProxy> => {
  const target = new URL(targetUrl);
  let frozen = false;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const pipe = (from: Socket, to: Socket) =>
    from.on("data", (chunk: Buffer) => {
      if (frozen) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    port,
    freeze: () => void (frozen = true),
    thaw() {
      frozen = false;
      for (const write of held.splice(0)) write();
    },
    cut() {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
};

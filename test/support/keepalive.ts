// Requests on one kept-alive socket, as a browser or an HTTP client library sends them: for the tests that
// a refused request's body does not break the connection it came on.
import http from "node:http";

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The local port of the socket it came on: the same number means the same connection. */
  localPort: number | undefined;
}

/** The body: a string or Buffer (sent with Content-Length), or pieces written one by one (sent chunked). */
export type Body = string | Buffer | { chunks: number; size: number };

export const sendOn = (port: () => number, defaults: Record<string, string> = {}) => (agent: http.Agent, method: string, path: string, headers: Record<string, string>, body?: Body): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: port(), method, path, agent, headers: { ...defaults, ...headers } });
    let localPort: number | undefined;
    req.on("socket", (s) => {
      const take = () => (localPort = s.localPort);
      if (s.localPort) take();
      else s.once("connect", take);
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, localPort }));
      res.on("error", reject);
    });
    if (body === undefined) return void req.end();
    if (typeof body === "string" || Buffer.isBuffer(body)) return void req.end(body);
    // Written as the socket takes it, so a server that stops reading holds the rest back, as a real client would be held.
    const piece = Buffer.alloc(body.size, "a");
    let left = body.chunks;
    const pump = () => {
      while (left > 0) {
        left--;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      req.end();
    };
    req.on("error", () => (left = 0));
    pump();
  });

/** One socket, kept alive: the second request must go on the connection the first one left. */
export const oneSocket = () => new http.Agent({ keepAlive: true, maxSockets: 1 });


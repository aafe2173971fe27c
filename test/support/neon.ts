import { neonConfig, Pool as NeonPool } from "@neondatabase/serverless";
import { afterAll, beforeAll, expect } from "vitest";
import ws from "ws";
import { type Db, fromPg } from "../../src/index.js";
import { startWsProxy, type WsProxy } from "./ws-proxy.js";

/** A Neon Pool that reaches the local server through the WebSocket proxy, with the settings verified here. */
export const neonPool = (url: string, proxy: WsProxy, max = 10): NeonPool => {
  neonConfig.webSocketConstructor = ws;
  neonConfig.wsProxy = proxy.wsProxy;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;
  return new NeonPool({ connectionString: url, max });
};

/**
 * For one test file: a WebSocket proxy started before its tests and, after them,
 * the Neon pools it handed out closed, the proxy closed, and a check that the
 * tests really went through it.
 */
export const neonForFile = (url: string) => {
  let proxy: WsProxy | undefined;
  const pools: NeonPool[] = [];
  beforeAll(async () => {
    proxy = await startWsProxy();
  });
  afterAll(async () => {
    expect(proxy!.connections()).toBeGreaterThan(0);
    for (const pool of pools) await pool.end();
    await proxy!.close();
  });
  const pool = (max = 4): NeonPool => {
    const p = neonPool(url, proxy!, max);
    pools.push(p);
    return p;
  };
  return { pool, db: (max = 4): Db => fromPg(pool(max)), proxy: () => proxy! };
};

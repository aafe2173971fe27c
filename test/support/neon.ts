import { neonConfig, Pool as NeonPool } from "@neondatabase/serverless";
import ws from "ws";
import type { WsProxy } from "./ws-proxy.js";

/** A Neon Pool that reaches the local server through the WebSocket proxy, with the settings verified here. */
export const neonPool = (url: string, proxy: WsProxy, max = 10): NeonPool => {
  neonConfig.webSocketConstructor = ws;
  neonConfig.wsProxy = proxy.wsProxy;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;
  return new NeonPool({ connectionString: url, max });
};

import type { Env } from "../config.js";
import { kickEnabled } from "./budget.js";
import { KICK_HEADER } from "./tick.js";

/**
 * Coalesces kicks within one isolate: at most one runs, and kicks that arrive
 * meanwhile become a single rerun after it (a tick that already decided the
 * queue was empty would not see their jobs). Never rejects: a failed kick only
 * means the job waits for the next cron tick.
 */
export const coalesced = (run: () => Promise<unknown>, onError: (error: unknown) => void = logKickError): (() => Promise<void>) => {
  let running: Promise<void> | undefined;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          try {
            await run();
          } catch (error) {
            onError(error);
          }
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
};

const logKickError = (error: unknown) =>
  console.error(JSON.stringify({ level: "warn", msg: "kick failed; the job waits for the next cron tick", error: error instanceof Error ? error.message : String(error) }));

/**
 * The Vercel kick: a POST to the deployment's own tick function, which runs a
 * tick with the short kick budget. The edge function waits for it under
 * `waitUntil`. JOBS_KICK_URL overrides the target (default: /api/tick on the
 * origin the enqueue arrived at).
 */
export const kickTickEndpoint = async (requestUrl: string, env: Env, fetcher: typeof fetch = fetch): Promise<void> => {
  if (!kickEnabled(env) || !env.CRON_SECRET) return;
  const url = env.JOBS_KICK_URL || new URL("/api/tick", requestUrl).toString();
  const response = await fetcher(url, { method: "POST", headers: { authorization: `Bearer ${env.CRON_SECRET}`, [KICK_HEADER]: "1" } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`the tick endpoint answered ${response.status}`);
};

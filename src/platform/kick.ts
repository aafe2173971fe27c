import type { Env } from "../settings/library.js";
import { kickEnabled } from "./budget.js";
import { KICK_HEADER } from "./invocation.js";

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
 * Where the kick goes: JOBS_KICK_URL, else /api/tick on this deployment's own
 * host (VERCEL_URL, set by Vercel). Never the host an enqueue request named:
 * the kick carries CRON_SECRET, and a Host header is the client's to choose.
 */
export const kickTarget = (env: Env): string | undefined =>
  env.JOBS_KICK_URL || (env.VERCEL_URL ? `https://${env.VERCEL_URL}/api/tick` : undefined);

/**
 * The Vercel kick: a POST to the deployment's own tick function, which runs a
 * tick with the short kick budget. The edge function waits for it under
 * `waitUntil`. Without a target (see `kickTarget`) there is no kick.
 */
export const kickTickEndpoint = async (env: Env, fetcher: typeof fetch = fetch): Promise<void> => {
  const url = kickTarget(env);
  if (!kickEnabled(env) || !env.CRON_SECRET || !url) return;
  const response = await fetcher(url, { method: "POST", headers: { authorization: `Bearer ${env.CRON_SECRET}`, [KICK_HEADER]: "1" } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`the tick endpoint answered ${response.status}`);
};

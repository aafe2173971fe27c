import { read } from "../settings/catalog.js";
import type { Env } from "../settings/parse.js";
import { kickEnabled } from "./budget.js";
import { logSpawnError } from "./invocation.js";
import { type TickRequest, tickRequest } from "../http/tick-request.js";

export { kickEnabled } from "./budget.js";

export interface CoalescedOptions {
  /**
   * Whether a call made while a run goes on gets that run's promise (default) or a settled one. On Workers
   * each request waits only on its own work: a request kept alive on another request's run was cancelled
   * as hung, and that run with it.
   */
  readonly join?: boolean;
  /** A run going on longer than this is taken for lost (its request cancelled): the next call starts another. */
  readonly staleAfterMs?: number;
}

/**
 * One run at a time, and calls that arrive meanwhile become a single rerun
 * after it (what was due when they came may be missed by a run that already
 * looked). Never rejects: `onError` hears of failures. The kick and the dev
 * server's cron both use it. `busy()` says whether a run goes on.
 */
export const coalesced = (
  run: () => Promise<unknown>,
  onError: (error: unknown) => void = logSpawnError,
  options: CoalescedOptions = {},
): (() => Promise<void>) & { busy(): boolean } => {
  let running: Promise<void> | undefined;
  let again = false;
  // Which run is the current one (a stale one that ends late must not clear its successor), and when
  // it started its last pass.
  let generation = 0;
  let since = 0;
  const stale = () => options.staleAfterMs !== undefined && Date.now() - since > options.staleAfterMs;
  const call = () => {
    if (running && !stale()) {
      again = true;
      return options.join === false ? Promise.resolve() : running;
    }
    const mine = ++generation;
    running = (async () => {
      try {
        do {
          again = false;
          since = Date.now();
          try {
            await run();
          } catch (error) {
            onError(error);
          }
        } while (again && generation === mine);
      } finally {
        if (generation === mine) running = undefined;
      }
    })();
    return running;
  };
  return Object.assign(call, { busy: () => running !== undefined && !stale() });
};

/**
 * Where ticks are started over HTTP: JOBS_KICK_URL, else /api/tick on this
 * deployment's own host (VERCEL_URL, set by Vercel). Never the host a request
 * named: the request carries CRON_SECRET, and a Host header is the client's to choose.
 */
export const kickTarget = (env: Env): string | undefined => {
  const host = read(env, "VERCEL_URL");
  return read(env, "JOBS_KICK_URL") ?? (host ? `https://${host}/api/tick` : undefined);
};

/**
 * Starts a tick invocation with `POST /api/tick` (CRON_SECRET), for a kick or a
 * slot handed over; with `async` the tick answers 202 at once. Without a target
 * or a secret there is nothing to send to, and nothing is sent.
 */
export const postTick = async (env: Env, req: TickRequest, fetcher: typeof fetch = fetch, url = kickTarget(env)): Promise<void> => {
  const secret = read(env, "CRON_SECRET");
  if (!secret || !url) return;
  // Bounded: a target that never answers would otherwise hold the kick (one in flight per isolate) for good.
  // A redirect is not followed: it ends at a page (a login, a 200), not at a tick.
  await tickAnswered(await fetcher(tickRequest(url, secret, req), { signal: AbortSignal.timeout(POST_TICK_TIMEOUT_MS), redirect: "manual" }));
};

/** How long a started tick has to answer (an async one answers 202 as soon as it runs). */
const POST_TICK_TIMEOUT_MS = 10_000;

/**
 * Reads a tick request's answer; throws, with the status and the start of the body, unless it is a tick's:
 * `202 {"accepted":true}`, or a report. Any other 2xx (a page, a path another function serves) started none.
 */
export const tickAnswered = async (response: Response): Promise<void> => {
  const body = await response.text();
  // The two answers the tick route gives, as its JSON writes them: 202 `{"accepted":true}`, or a report (it always has `capped`).
  if (!response.ok || !/^\{"accepted":true\}$|"capped":(true|false)/.test(body)) throw new Error(`the tick endpoint answered ${response.status}${response.ok ? ", not as a tick does (check JOBS_KICK_URL)" : ""}: ${body.slice(0, 300)}`);
};

/** Whether ticks can be started over HTTP here (a target and CRON_SECRET to send). */
export const canPostTick = (env: Env): boolean => kickTarget(env) !== undefined && read(env, "CRON_SECRET") !== undefined;

/** The kick on Vercel-like platforms: a new tick invocation over HTTP, at most one in flight per isolate. */
export const httpKick = (env: Env, fetcher: typeof fetch = fetch): (() => Promise<void>) =>
  coalesced(() => postTick(env, { kick: true, async: true }, fetcher));

/**
 * Reads the settings of the kick and of ticks started over HTTP, so a wrong one fails every
 * request as any wrong setting does (the variable named in the log, enqueues refused), not
 * only the cron's tick (a malformed JOBS_KICK_URL) or every route at start-up (JOBS_KICK).
 */
export const checkKickSettings = (env: Env): void => {
  kickEnabled(env);
  kickTarget(env);
  // The budget a kicked tick claims for: read only by that tick, so a wrong one failed every kick unseen.
  read(env, "JOBS_KICK_BUDGET");
};

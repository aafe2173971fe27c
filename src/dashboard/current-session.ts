import type { Context } from "hono";
import { sessionEnded } from "../admin/login.js";
import type { Logger } from "../log.js";
import type { Sessions } from "./auth.js";
import type { AnyJobs } from "./dashboard-context.js";
import { type Session, sessionId } from "./session.js";

export interface CurrentSessionDeps {
  readonly sessions: Sessions;
  readonly jobs: (c: Context) => Promise<AnyJobs>;
  readonly cookiePath: string;
  readonly logger: Logger;
}

/** The table of logged-out sessions is missing: code deployed before `migrate:deploy` ran migration 022. */
const missingTable = (e: unknown) => (e as { code?: unknown } | null)?.code === "42P01";

/**
 * The request's session: a signed cookie whose session was not logged out (one primary-key probe;
 * the jobs instance is opened only for a signed cookie, so other requests never open a pool). A
 * logged-out cookie is cleared from the browser, so the login page, which sends a session on,
 * does not send it back here.
 */
export const currentSession = (d: CurrentSessionDeps) => {
  let warned = false;
  return async (c: Context): Promise<{ session: Session; jobs: AnyJobs } | undefined> => {
    const signed = await d.sessions.read(c);
    if (!signed) return undefined;
    const jobs = await d.jobs(c);
    let ended: boolean;
    try {
      ended = await sessionEnded(jobs, await sessionId(signed));
    } catch (e) {
      if (!missingTable(e)) throw e;
      // No logouts can have been recorded: the signed session stands, as it did before logouts were kept.
      if (!warned) d.logger.log("warn", "dashboard: the table of logged-out sessions is missing; run the migrations (pgtick migrate)", {});
      warned = true;
      ended = false;
    }
    if (!ended) return { session: signed, jobs };
    d.sessions.end(c, d.cookiePath);
    return undefined;
  };
};

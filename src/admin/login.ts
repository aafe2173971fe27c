import type { Db } from "../db.js";
import { type LoginVerdict, recordLogin } from "../store/admin/login-throttle.js";
import { loggedOut, recordLogout } from "../store/admin/session-logouts.js";
import type { Tables } from "../store/shared/tables.js";

/**
 * The dashboard's login attempt from the address `key`, whose password was `ok` (compared before,
 * in constant time): recorded by the throttle's one statement, which says what to answer.
 */
export const loginAttempt = (jobs: { readonly db: Db; readonly tables: Tables }, key: string, ok: boolean, now?: Date): Promise<LoginVerdict> =>
  recordLogin(jobs.db, jobs.tables, key, ok, now);

/** Ends the dashboard session `id` (a digest of it, see dashboard/session.ts) before its expiry: its cookie opens nothing after this. */
export const logoutSession = (jobs: { readonly db: Db; readonly tables: Tables }, id: string, expiresAt: Date): Promise<void> =>
  recordLogout(jobs.db, jobs.tables, id, expiresAt);

/** Whether the dashboard session `id` was ended by logging out. */
export const sessionEnded = (jobs: { readonly db: Db; readonly tables: Tables }, id: string): Promise<boolean> => loggedOut(jobs.db, jobs.tables, id);

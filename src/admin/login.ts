import type { Db } from "../db.js";
import { type LoginVerdict, recordLogin } from "../store/admin/login-throttle.js";
import type { Tables } from "../store/shared/tables.js";

/**
 * The dashboard's login attempt from the address `key`, whose password was `ok` (compared before,
 * in constant time): recorded by the throttle's one statement, which says what to answer.
 */
export const loginAttempt = (jobs: { readonly db: Db; readonly tables: Tables }, key: string, ok: boolean, now?: Date): Promise<LoginVerdict> =>
  recordLogin(jobs.db, jobs.tables, key, ok, now);

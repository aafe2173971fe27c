// Dashboard sessions ended before their expiry (migration 022): a signed cookie cannot be taken back,
// so logging out records the session here and every request behind the login looks it up.
import type { Db } from "../../db.js";
import type { Tables } from "../shared/tables.js";

/** Expired rows one logout removes, so no statement does unbounded work. */
const CLEANUP_BATCH = 20;

/**
 * How long a row is kept past its expiry, read on the database's clock: a cookie's expiry is checked on
 * the clock of the machine serving it, and one whose clock is behind took a logged-out cookie again once
 * the row was gone.
 */
const CLOCK_MARGIN = "1 day";

/** Records a session as ended until `expiresAt` (when its cookie would stop working anyway) and a margin; one statement. */
export const recordLogout = async (db: Db, t: Tables, session: string, expiresAt: Date): Promise<void> => {
  await db.query(
    `WITH gone AS (
       DELETE FROM ${t.dashboardLogouts} WHERE session IN (
         SELECT session FROM ${t.dashboardLogouts} WHERE expires_at < now() - interval '${CLOCK_MARGIN}'
         ORDER BY expires_at LIMIT ${CLEANUP_BATCH}))
     INSERT INTO ${t.dashboardLogouts} (session, expires_at) VALUES ($1, $2::timestamptz)
     ON CONFLICT (session) DO NOTHING`,
    [session, expiresAt.toISOString()],
  );
};

/** Whether the session was ended by a logout; one primary-key probe. */
export const loggedOut = async (db: Db, t: Tables, session: string): Promise<boolean> => {
  const { rows } = await db.query<{ ended: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${t.dashboardLogouts} WHERE session = $1) AS ended`, [session]);
  return rows[0]?.ended === true;
};

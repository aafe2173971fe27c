// The dashboard's login throttle, kept in the database: serverless isolates come and go and
// share no memory, so a counter in memory would restart with every new isolate.
import type { Db } from "../../db.js";
import type { Tables } from "../shared/tables.js";

/** The rules, in one place so the statement, the page and the documentation agree. */
export const THROTTLE = {
  /** Failures from one address that cost no wait. */
  freeFailures: 5,
  /** The wait after the first failure beyond those; it doubles with each further failure. */
  firstWaitS: 1,
  /** The longest wait one address gets. */
  maxWaitS: 15 * 60,
  /** An address's failures are forgotten this long after its last one. */
  forgetS: 60 * 60,
  /** Failures from all addresses together, within the global window, before everyone is slowed. */
  globalFree: 100,
  /** Under that pressure every failure costs its address at least 1 s, doubling every `globalStep` more failures. */
  globalStep: 100,
  globalMaxWaitS: 30,
  /** Failures of all addresses are counted in windows this long (the window starts at its first failure). */
  globalWindowS: 15 * 60,
  /** Forgotten rows one attempt removes, so no statement does unbounded work. */
  cleanupBatch: 20,
} as const;

/** The key of every address together; no client address normalizes to it. */
const ALL_ADDRESSES = "*";

export type LoginVerdict =
  /** The password was right and the address's failures are reset. */
  | { readonly kind: "ok" }
  /** The password was wrong; `waitS` (0 or more) must pass before the address's next attempt is looked at. */
  | { readonly kind: "wrong"; readonly waitS: number; readonly failures: number; readonly globalFailures: number }
  /** The address is still waiting: the attempt was not looked at, and nothing changed. */
  | { readonly kind: "wait"; readonly waitS: number };

const T = "COALESCE($3::timestamptz, now())";
const seconds = (s: number) => `interval '${s} seconds'`;
/** Own wait after `n` failures (seconds): none for the free ones, then doubling up to the cap. */
const ownWait = (n: string) =>
  `CASE WHEN ${n} <= ${THROTTLE.freeFailures} THEN 0 ELSE least(${THROTTLE.maxWaitS}, ${THROTTLE.firstWaitS} * power(2, least(${n} - ${THROTTLE.freeFailures} - 1, 30))) END`;
/** The least wait every failing address gets while all addresses together failed `gn` times. */
const globalWait = (gn: string) =>
  `CASE WHEN ${gn} <= ${THROTTLE.globalFree} THEN 0 ELSE least(${THROTTLE.globalMaxWaitS}, power(2, least(floor((${gn} - ${THROTTLE.globalFree} - 1) / ${THROTTLE.globalStep}), 30))) END`;
const waitUntil = (n: string) => `${T} + make_interval(secs => greatest(${ownWait(n)}, ${globalWait("(SELECT n FROM g0)")}))`;

/**
 * ONE statement per login attempt, so concurrent attempts cannot slip between a check and a
 * write: the upsert locks the address's row and decides from its latest version. $1 the
 * address key, $2 whether the password was right, $3 the clock (NULL: the database's).
 * A waiting address's row is left as it is (the ON CONFLICT ... WHERE refuses the update), so
 * attempts made while waiting never lengthen the wait. The global row counts only failures, in
 * windows of globalWindowS that start at their first failure (its `blocked_until` holds the start:
 * no address waits on that row), so a steady trickle of failures never adds up to a slow-down.
 */
const throttleStatement = (table: string): string => {
  const n = `least((CASE WHEN r.updated_at < ${T} - ${seconds(THROTTLE.forgetS)} THEN 0 ELSE r.failures END) + 1, 1000000)`;
  return `WITH g0 AS (
  SELECT COALESCE(max(CASE WHEN blocked_until >= ${T} - ${seconds(THROTTLE.globalWindowS)} THEN failures END), 0) + 1 AS n
  FROM ${table} WHERE key = '${ALL_ADDRESSES}'
), pre AS (
  SELECT blocked_until FROM ${table} WHERE key = $1::text
), a AS (
  INSERT INTO ${table} AS r (key, failures, blocked_until, updated_at)
  VALUES ($1::text,
    CASE WHEN $2::boolean THEN 0 ELSE 1 END,
    CASE WHEN $2::boolean THEN 'epoch'::timestamptz ELSE ${waitUntil("1")} END,
    CASE WHEN $2::boolean THEN 'epoch'::timestamptz ELSE ${T} END)
  ON CONFLICT (key) DO UPDATE SET
    failures = CASE WHEN $2::boolean THEN 0 ELSE ${n} END,
    blocked_until = CASE WHEN $2::boolean THEN 'epoch'::timestamptz ELSE ${waitUntil(n)} END,
    updated_at = CASE WHEN $2::boolean THEN 'epoch'::timestamptz ELSE ${T} END
  WHERE r.blocked_until <= ${T}
  RETURNING failures, blocked_until
), g AS (
  INSERT INTO ${table} AS r (key, failures, blocked_until, updated_at)
  SELECT '${ALL_ADDRESSES}', 1, ${T}, ${T} FROM a WHERE NOT $2::boolean
  ON CONFLICT (key) DO UPDATE SET
    failures = least((CASE WHEN r.blocked_until < ${T} - ${seconds(THROTTLE.globalWindowS)} THEN 0 ELSE r.failures END) + 1, 1000000000),
    blocked_until = CASE WHEN r.blocked_until < ${T} - ${seconds(THROTTLE.globalWindowS)} THEN ${T} ELSE r.blocked_until END,
    updated_at = ${T}
  RETURNING failures
), gone AS (
  DELETE FROM ${table} WHERE key IN (
    SELECT key FROM ${table}
    WHERE updated_at < ${T} - ${seconds(THROTTLE.forgetS)} AND key <> '${ALL_ADDRESSES}' AND key <> $1::text
    ORDER BY updated_at LIMIT ${THROTTLE.cleanupBatch}
    FOR UPDATE SKIP LOCKED)
)
SELECT (SELECT count(*) FROM a)::int AS counted,
  (SELECT failures FROM a) AS failures,
  (SELECT failures FROM g) AS global_failures,
  (SELECT CASE WHEN b > ${T} THEN ceil(extract(epoch FROM b - ${T}))::int ELSE 0 END
     FROM (SELECT COALESCE((SELECT blocked_until FROM a), (SELECT blocked_until FROM pre)) AS b) x) AS wait_s`;
};

interface Row {
  counted: number;
  failures: number | null;
  global_failures: number | null;
  wait_s: number | null;
}

/**
 * Records one login attempt from `key` whose password was `ok`, and says what to answer.
 * The password is compared before this (in constant time); a waiting address gets `wait`
 * whatever it was, so the answer tells nothing about the password.
 */
export const recordLogin = async (db: Db, t: Tables, key: string, ok: boolean, now?: Date): Promise<LoginVerdict> => {
  if (key === ALL_ADDRESSES) throw new Error("the key of all addresses is not a client's");
  const { rows } = await db.query<Row>(throttleStatement(t.loginThrottle), [key, ok, now ? now.toISOString() : null]);
  const row = rows[0];
  if (!row) throw new Error("the login throttle statement returned no row");
  const waitS = Number(row.wait_s ?? 0);
  // Refused: the snapshot may predate a row a concurrent attempt just made; a second is a safe answer.
  if (row.counted === 0) return { kind: "wait", waitS: Math.max(1, waitS) };
  if (ok) return { kind: "ok" };
  return { kind: "wrong", waitS, failures: Number(row.failures ?? 0), globalFailures: Number(row.global_failures ?? 0) };
};

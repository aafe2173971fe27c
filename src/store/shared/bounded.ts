/**
 * SQL pieces for reads that stay fast however large a table grows: counts that stop at a bound,
 * and the distinct values of an index's leading column found by a loose index scan (one index
 * descent per value, not a read of every row).
 */

/** Counts stop here: a count that reaches it says "at least this many" (shown as "10,000+"). */
export const COUNT_LIMIT = 10_000;

/**
 * How many rows of `table` matching `where` (over alias `c`) have `key` = `value`, counted up to
 * COUNT_LIMIT + 1 (so a count above the limit is told apart from one at it), along the index on
 * (key, ...rest) in its own order, so that only that index can serve it. The value is one the
 * planner cannot see (one per row of a loose scan), so each part is there to keep it off plans
 * that read far more than the limit:
 * - `key = value` would let an index in another order, filtered by key, or a sequential scan that
 *   stops at the limit look as cheap (both read the whole table when the value is rare); as a
 *   range written `>= value AND <= value`, the order (key, ...rest) needs an index leading with key;
 * - a LIMIT it cannot see is taken to read a tenth of the rows, so the planner prefers the index in
 *   order to a bitmap scan of every matching row sorted (a constant limit above its guess of the
 *   matching rows makes the sort look free, and it reads and sorts them all).
 */
export const boundedCount = (table: string, key: string, value: string, rest: string, where = "true", limit = String(COUNT_LIMIT)): string =>
  `(SELECT count(*) FROM (
      SELECT 1 FROM ${table} c WHERE ${where} AND c.${key} >= ${value} AND c.${key} <= ${value}
      ORDER BY c.${key}, ${rest} LIMIT (SELECT ${limit} + 1)) bounded)::int`;

/**
 * What all the per-key counts of one read may read together: with many keys, each stops sooner. The
 * overview reads them every 3 s per open tab: 100,000 entries a table was 53 ms a poll at 50 busy jobs.
 */
export const COUNT_BUDGET = 30_000;
/** The least a per-key count goes to, however many keys share the budget (a floor of 1,000 read 600,000 entries at 300 jobs). */
export const MIN_KEY_COUNT = 10;

/** Where each of the per-key counts over a loose scan's `cte` stops: COUNT_LIMIT, or less when many keys share COUNT_BUDGET. */
export const perKeyLimit = (cte: string): string =>
  `greatest(${MIN_KEY_COUNT}, least(${COUNT_LIMIT}, ${COUNT_BUDGET} / greatest(1, (SELECT count(*) FROM ${cte})::int)))`;

/**
 * A recursive CTE `cte(key, first)`: for each distinct `key` among the rows of `table` matching
 * `where` (written over alias `l`), in order, its first `first` in the order `firstOrder` (e.g.
 * "run_at" or "dead_at DESC"). An index on (key, first) must serve it: each step is one descent
 * of that index past the previous key, so a million rows of four jobs cost five descents.
 */
export const looseScanCte = (cte: string, table: string, key: string, first: string, firstOrder: string, where: string): string => {
  const step = (after: string) =>
    `SELECT l.${key} AS key, l.${first} AS first FROM ${table} l WHERE ${where}${after} ORDER BY l.${key}, l.${firstOrder} LIMIT 1`;
  return `${cte}(key, first) AS (
    (${step("")})
    UNION ALL
    SELECT nx.key, nx.first FROM ${cte} prev CROSS JOIN LATERAL (${step(` AND l.${key} > prev.key`)}) nx)`;
};

/**
 * The rows of a looseScanCte as `alias(key, first)`, for a FROM list. The planner guesses ~100
 * rows for any recursive CTE, and a bounded count per row then looks expensive enough at a
 * million rows that PostgreSQL JIT-compiles the statement (~40 ms, more than the read itself);
 * passed on as arrays, the rows are guessed at 10.
 */
export const looseScanRows = (cte: string, alias: string): string =>
  `(SELECT array_agg(key ORDER BY key) AS keys, array_agg(first ORDER BY key) AS firsts FROM ${cte}) ${alias}_arrays,
   unnest(${alias}_arrays.keys, ${alias}_arrays.firsts) AS ${alias}(key, first)`;

/**
 * Where the counts of `first` (rows `(n, ...)` counted to `lim`) that reached it go on to: the budget
 * the others left, shared among them (one busy job beside 299 with one job each was "100+", with
 * 29,600 entries of the budget unread). At most twice the budget is read in all.
 */
export const secondLimit = (first: string, lim: string): string =>
  `(SELECT least(${COUNT_LIMIT}, ${lim} + greatest(0, ${COUNT_BUDGET} - sum(least(f.n, ${lim})))::int
             / greatest(1, count(*) FILTER (WHERE f.n > ${lim}))::int) FROM ${first} f)`;

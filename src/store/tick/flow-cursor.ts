import type { Params, Tables } from "../shared/tables.js";

/** Where the deployment's round-robin over keys resumes: for a tick's first claim that admits keyed jobs. */
export const storedCursorSql = (t: Tables): string => `coalesce((SELECT flow_cursor FROM ${t.state} WHERE id = 1), '')`;

/** Saves where this tick's round-robin ended, for the next tick to resume there (its final statement). */
export const saveCursorCte = (t: Tables, p: Params, cursor: string): string => {
  const value = p.add(cursor);
  return `flow_cursor_saved AS (UPDATE ${t.state} SET flow_cursor = ${value}::text WHERE id = 1 AND flow_cursor IS DISTINCT FROM ${value}::text RETURNING 1)`;
};

import { JobsError } from "../../errors.js";
import { longerThan, MAX_KEY_CHARS } from "../../terms.js";

/** SQL pieces every read shares: ids, timestamps, text filters. */

/** Ids reach SQL as `::uuid`; anything else would be a cast error, so callers treat it as "no such row". */
export { isUuid } from "../../ids.js";

/** A timestamp as UTC ISO 8601 with microseconds: the same text on every driver and session time zone. */
export const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A filter value bound as text: PostgreSQL text cannot hold U+0000, so refuse it here instead of failing in SQL. */
export const textFilter = (value: string | undefined, field: string): string | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || longerThan(value, MAX_KEY_CHARS) || value.includes("\u0000")) {
    throw new JobsError("invalid_options", `${field} must be a string of at most 255 characters without U+0000`, { field });
  }
  // Nothing has an empty name or key: an empty filter is a mistake (a form's blank field), not a match for none.
  if (value === "") throw new JobsError("invalid_options", `${field} must not be empty; leave it out to match every one`, { field });
  return value;
};


/** Pages of the API's lists: limits, opaque keyset cursors. */
import { JobsError } from "../../errors.js";
import { isUuid } from "./sql.js";

const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

export interface Page<T> {
  readonly items: T[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null;
}

export const pageLimit = (limit: number | undefined): number => {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new JobsError("invalid_options", `limit must be an integer from 1 to ${MAX_LIMIT}`, { field: "limit" });
  }
  return limit;
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const cursorError = () => new JobsError("invalid_options", "cursor is not one this API returned", { field: "cursor" });

/** Cursors are opaque to clients: base64url of a JSON array (a list's sort key of its last row). */
export const encodeCursorParts = (parts: readonly unknown[]): string =>
  btoa(JSON.stringify(parts)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** The array `encodeCursorParts` made, of `length` items; anything else is `invalid_options` on `cursor`. */
export const decodeCursorParts = (cursor: string, length: number, maxChars = 200): unknown[] => {
  if (typeof cursor !== "string" || cursor.length > maxChars || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw cursorError();
  let parsed: unknown;
  try {
    const b64 = cursor.replace(/-/g, "+").replace(/_/g, "/");
    parsed = JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)));
  } catch {
    throw cursorError();
  }
  if (!Array.isArray(parsed) || parsed.length !== length) throw cursorError();
  return parsed;
};

/** A list ordered by (time, id): the cursor is the last row's. */
export const encodeCursor = (at: string, id: string): string => encodeCursorParts([at, id]);

// Date.parse rolls "2024-02-30" over to March; PostgreSQL refuses it. Only a date that reads back the same is real,
// and only one of the years a row can have (1970-9999: PostgreSQL has no year 0, which Date.parse takes).
const isRealTime = (at: string): boolean => {
  const ms = Date.parse(at);
  return !Number.isNaN(ms) && ms >= 0 && ms < 253_402_300_800_000 && new Date(ms).toISOString().slice(0, 19) === at.slice(0, 19);
};

const isCursorTime = (at: unknown): at is string => typeof at === "string" && ISO.test(at) && isRealTime(at);

export const decodeCursor = (cursor: string): { at: string; id: string } => {
  const [at, id] = decodeCursorParts(cursor, 2);
  if (!isCursorTime(at) || !isUuid(id)) throw cursorError();
  return { at, id };
};

/**
 * A walk over a list that changes under it (a bulk replay): the last row's (time, id), and when the walk
 * began, so rows that came after it are not met again. A cursor of (time, id) alone, as the last release
 * gave, has no start.
 */
export const encodeWalkCursor = (at: string, id: string, began: string): string => encodeCursorParts([at, id, began]);

export const decodeWalkCursor = (cursor: string): { at: string; id: string; began?: string } => {
  let parts: unknown[];
  try {
    parts = decodeCursorParts(cursor, 3);
  } catch {
    return decodeCursor(cursor);
  }
  const [at, id, began] = parts;
  if (!isCursorTime(at) || !isUuid(id) || !isCursorTime(began)) throw cursorError();
  return { at, id, began };
};

/** Turns `limit + 1` rows into a page: the extra row only says that there is a next page. */
export const toPage = <T>(rows: ReadonlyArray<{ v: T; k: string; id: string }>, limit: number): Page<T> => {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items: items.map((r) => r.v), nextCursor: rows.length > limit && last ? encodeCursor(last.k, last.id) : null };
};

/** Pages of the API's lists: limits, opaque keyset cursors. */
import { JobsError } from "../../errors.js";
import { isUuid } from "./sql.js";

export const DEFAULT_LIMIT = 50;
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

/** Cursors are opaque to clients: base64url of the last row's sort key (time, id). */
export const encodeCursor = (at: string, id: string): string =>
  btoa(JSON.stringify([at, id])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

// Date.parse rolls "2024-02-30" over to March; PostgreSQL refuses it. Only a date that reads back the same is real.
const isRealTime = (at: string): boolean => {
  const ms = Date.parse(at);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === at.slice(0, 19);
};

export const decodeCursor = (cursor: string): { at: string; id: string } => {
  const bad = () => new JobsError("invalid_options", "cursor is not one this API returned", { field: "cursor" });
  if (typeof cursor !== "string" || cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    const b64 = cursor.replace(/-/g, "+").replace(/_/g, "/");
    parsed = JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [at, id] = parsed as unknown[];
  if (typeof at !== "string" || !ISO.test(at) || !isRealTime(at) || !isUuid(id)) throw bad();
  return { at, id };
};

/** Turns `limit + 1` rows into a page: the extra row only says that there is a next page. */
export const toPage = <T>(rows: ReadonlyArray<{ v: T; k: string; id: string }>, limit: number): Page<T> => {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items: items.map((r) => r.v), nextCursor: rows.length > limit && last ? encodeCursor(last.k, last.id) : null };
};

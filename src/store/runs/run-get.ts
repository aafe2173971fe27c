import type { Db } from "../../db.js";
import { runJson, type RunView } from "./run-views.js";
import type { Tables } from "../shared/tables.js";

/** Run ids are positive integers of at most 19 digits (bigint). */
export const isRunId = (id: unknown): id is string => typeof id === "string" && /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= 9_223_372_036_854_775_807n;

/** One run by its id; null when there is none (or the history no longer keeps it). */
export const getRun = async (db: Db, t: Tables, id: string): Promise<RunView | null> => {
  if (!isRunId(id)) return null;
  const { rows } = await db.query<{ v: RunView }>(`SELECT ${runJson("r")} AS v FROM ${t.runs} r WHERE r.id = $1::bigint`, [id]);
  return rows[0]?.v ?? null;
};

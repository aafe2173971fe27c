import type { Context, Hono } from "hono";
import { isJobsError } from "../errors.js";
import type { DashboardEnv } from "./dashboard-app.js";

import type { AnyJobs } from "../jobs.js";

export type { AnyJobs } from "../jobs.js";

/** What every page's routes get: where the dashboard lives. The queue is `c.var.jobs`, resolved per request. */
export interface DashboardDeps {
  readonly base: string;
  readonly onEnqueued?: (info: { ids: string[]; dueNow: boolean }, c: Context) => void | Promise<void>;
}

/** Tells the deployment that jobs due now were queued (it kicks a tick); never fails the page. */
export const enqueued = async (deps: DashboardDeps, c: Context, ids: readonly string[]): Promise<void> => {
  if (ids.length > 0) await deps.onEnqueued?.({ ids: [...ids], dueNow: true }, c);
};

export type Routes = (app: Hono<DashboardEnv>, deps: DashboardDeps) => void;

/** Query-string text: one value, trimmed, empty meaning absent. */
export const q = (value: string | undefined): string | undefined => {
  const v = value?.trim();
  return v ? v : undefined;
};

/** All values of a form field as strings (checkbox groups post one per box). */
export const formList = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === "string");

export const formText = (value: unknown): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === "string" ? v : undefined;
};

/** A bad filter or cursor is the operator's to fix: its message goes on the page, never a 500. */
export const userError = (error: unknown): string => {
  if (isJobsError(error)) return error.message;
  throw error;
};

export const qs = (params: Record<string, string | number | undefined>): string => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : "";
};

/**
 * The job names a list's filter offers. A live poll swaps in the list only, not its filter: it gets none
 * (a filter of 2,000 names was 190 KB of every poll).
 */
export const names = (c: Context, jobs: AnyJobs): string[] => (c.req.header("x-pgtick-live") !== undefined ? [] : [...jobs.registry.keys()].sort());

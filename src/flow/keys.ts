import { errorText, safeJson, storableText } from "../error-text.js";
import { JobsError } from "../errors.js";
import type { AnyJob } from "../job.js";
import { unstorable } from "../payload.js";
import { longerThan, MAX_KEY_CHARS } from "../terms.js";
import { rateLimitsOf } from "./define.js";
import { rateScope } from "./spec.js";

/** What a queue row stores for its limits. */
export interface FlowKeys {
  readonly flow_key: string | null;
  readonly concurrency_key: string | null;
  readonly rate_keys: Record<string, string> | null;
}

const NO_FLOW: FlowKeys = { flow_key: null, concurrency_key: null, rate_keys: null };

const PREVIEW_CHARS = 100;

/** What a key function returned, short and safe to render: a bigint, a circular object or a 5 MB string included. */
const preview = (key: unknown): string => {
  const type = key === null ? "null" : Array.isArray(key) ? "array" : typeof key;
  if (type === "undefined" || type === "null") return type;
  const shown = typeof key === "string" ? storableText(JSON.stringify(key), PREVIEW_CHARS) : safeJson(key, PREVIEW_CHARS);
  return typeof key === "string" ? `a string of ${key.length} characters, ${shown}` : `${type} ${shown}`;
};

const keyOf = (job: AnyJob, field: string, fn: ((payload: unknown) => string) | undefined, payload: unknown, where: Record<string, unknown>): string => {
  if (!fn) return "";
  let key: unknown;
  try {
    key = fn(payload);
  } catch (error) {
    throw new JobsError("invalid_options", `${field} of job ${job.name} threw: ${errorText(error, PREVIEW_CHARS)}`, { ...where, field });
  }
  if (typeof key !== "string" || key.length === 0 || longerThan(key, MAX_KEY_CHARS) || unstorable(key)) {
    const what = typeof key === "string" && key.length > 0 && !longerThan(key, MAX_KEY_CHARS) ? " without U+0000 or a lone surrogate" : "";
    throw new JobsError("invalid_options", `${field} of job ${job.name} must return a string of 1 to 255 characters${what}, got ${preview(key)}`, { ...where, field });
  }
  return key;
};

/**
 * The keys of a job's limits, from its payload as its schema parsed it, computed at enqueue
 * (so a limit never needs the handler's code to be evaluated). A key function that throws or
 * returns no string is `invalid_options`, and nothing is stored.
 */
export const flowKeysFor = (job: AnyJob, payload: unknown, where: Record<string, unknown> = {}): FlowKeys => {
  const rates = rateLimitsOf(job.rateLimit);
  if (!job.concurrency && rates.length === 0) return NO_FLOW;
  const concurrency = job.concurrency ? keyOf(job, "concurrency.key", job.concurrency.key as ((p: unknown) => string) | undefined, payload, where) : null;
  const rateKeys: Record<string, string> = {};
  rates.forEach((r, i) => {
    rateKeys[rateScope(job.name, r.group, r.periodMs)] = keyOf(job, Array.isArray(job.rateLimit) ? `rateLimit[${i}].key` : "rateLimit.key", r.key as ((p: unknown) => string) | undefined, payload, where);
  });
  // The key a claim shares its slots by: the concurrency bucket, else the first rate bucket.
  const first = Object.entries(rateKeys)[0];
  const flowKey = concurrency !== null ? `c:${job.name}:${concurrency}` : `r:${first![0]}:${first![1]}`;
  return { flow_key: flowKey, concurrency_key: concurrency, rate_keys: rates.length > 0 ? rateKeys : null };
};

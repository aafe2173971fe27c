import { JobsError } from "../errors.js";
import type { AnyJob } from "../job.js";
import { rateLimitsOf } from "./define.js";

/** One rate limit as a claim applies it: the bucket scope it counts in, and the window. */
export interface RateRule {
  /** `g:<group>:<periodMs>` (shared by the group's jobs) or `j:<job>:<periodMs>`. */
  readonly scope: string;
  readonly limit: number;
  readonly periodMs: number;
}

/** The limits of the jobs in code, as every claim statement receives them. */
export interface FlowSpec {
  /** Some job has a limit: claims go through the admission, settles count runs out of their buckets. */
  readonly enabled: boolean;
  /** The `p_limits` parameter of `flow_admit`. */
  readonly limitsJson: string;
  readonly rules: ReadonlyMap<string, { readonly concurrency?: number; readonly rates: readonly RateRule[] }>;
}

/**
 * Starts are counted from the claim. A handler measures its own start a little later, by a lag
 * that varies: the window is kept this much wider so that starts measured there respect it too.
 */
export const ratePadMs = (periodMs: number): number => Math.min(50, Math.floor(periodMs / 10));

export const rateScope = (job: string, group: string | undefined, periodMs: number): string =>
  group !== undefined ? `g:${group}:${periodMs}` : `j:${job}:${periodMs}`;

/**
 * Reads every job's limits once, at createJobs. Jobs sharing a group must declare the group's
 * limit alike for each period, and a job may not have two limits of one scope: both are
 * `invalid_config` naming the jobs.
 */
export const flowSpec = (registry: ReadonlyMap<string, AnyJob>): FlowSpec => {
  const rules = new Map<string, { concurrency?: number; rates: RateRule[] }>();
  const groups = new Map<string, { job: string; limit: number }>();
  // Each group's rules as the first job naming it declared them: every other job must declare the same.
  const declared = new Map<string, { job: string; rules: string }>();
  // No prototype: a job named "__proto__" is a key like any other (on a plain object it set the prototype, and its limits were lost).
  const limits: Record<string, { c: number | null; r: Array<{ s: string; l: number; p: number; pad: number }> }> = Object.create(null);
  // Every rate scope, with what declared it: a bucket is `r:<scope>:<key>`, and keys may hold colons.
  const scopes = new Map<string, string>();
  for (const job of registry.values()) {
    const rates = rateLimitsOf(job.rateLimit);
    if (!job.concurrency && rates.length === 0) continue;
    const own = new Set<string>();
    const list = rates.map((r) => {
      const scope = rateScope(job.name, r.group, r.periodMs);
      if (own.has(scope)) throw new JobsError("invalid_config", `job ${job.name} has two rate limits of ${r.periodMs} ms${r.group ? ` in group ${r.group}` : ""}: give one a group of its own (group: "${job.name}-all")`);
      own.add(scope);
      if (r.group !== undefined) {
        const seen = groups.get(scope);
        if (seen && seen.limit !== r.limit) {
          throw new JobsError("invalid_config", `rate limit group ${r.group} (${r.periodMs} ms) is ${seen.limit} in job ${seen.job} but ${r.limit} in job ${job.name}: jobs sharing a group must declare it alike`);
        }
        groups.set(scope, { job: job.name, limit: r.limit });
      }
      scopes.set(scope, `${r.group !== undefined ? `group ${r.group}` : `job ${job.name}`} (${r.periodMs} ms)`);
      return { scope, limit: r.limit, periodMs: r.periodMs };
    });
    for (const group of new Set(rates.flatMap((r) => (r.group === undefined ? [] : [r.group])))) {
      const own = rates.filter((r) => r.group === group).map((r) => `${r.limit} per ${r.periodMs} ms`).sort().join(", ");
      const seen = declared.get(group);
      if (seen && seen.rules !== own) {
        throw new JobsError("invalid_config", `rate limit group ${group} is ${seen.rules} in job ${seen.job} but ${own} in job ${job.name}: jobs sharing a group must declare it alike`);
      }
      declared.set(group, { job: job.name, rules: own });
    }
    rules.set(job.name, { concurrency: job.concurrency?.limit, rates: list });
    limits[job.name] = { c: job.concurrency?.limit ?? null, r: list.map((r) => ({ s: r.scope, l: r.limit, p: r.periodMs, pad: ratePadMs(r.periodMs) })) };
  }
  // Buckets are named `<job>:<key>`: jobs "mail" (key "send:x") and "mail:send" (key "x") would share one.
  const limited = [...rules.keys()].sort();
  for (const a of limited) {
    const b = prefixedBy(limited, `${a}:`);
    if (b !== undefined) {
      throw new JobsError("invalid_config", `jobs ${a} and ${b} both have limits, and one's name is the other's followed by ":": their keys could name the same bucket; rename one`);
    }
  }
  // Group x per 60 s with key "5:k" and group "x:60000" per 5 ms with key "k" would both be r:g:x:60000:5:k.
  const scopeNames = [...scopes.keys()].sort();
  for (const [a, what] of scopes) {
    const b = prefixedBy(scopeNames, `${a}:`);
    if (b !== undefined) {
      throw new JobsError("invalid_config", `rate limits of ${what} and ${scopes.get(b)} could count in the same bucket; rename a group`);
    }
  }
  return { enabled: rules.size > 0, limitsJson: JSON.stringify(limits), rules };
};

/**
 * The first of `sorted` (ascending) that starts with `prefix`, found by binary search: every string
 * starting with it sorts right at or after it. Comparing each name with every other was quadratic:
 * 57 ms of each createJobs at 1,000 limited jobs, and edge apps build one per request.
 */
const prefixedBy = (sorted: readonly string[], prefix: string): string | undefined => {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  const found = sorted[lo];
  return found !== undefined && found.startsWith(prefix) ? found : undefined;
};

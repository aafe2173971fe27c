import { type FlowSpec, ratePadMs } from "./spec.js";

/** Which limit a queued, due job waits on. */
export type WaitingOn =
  | { readonly kind: "concurrency"; readonly key: string; readonly limit: number; readonly running: number }
  | { readonly kind: "rate"; readonly key: string; readonly limit: number; readonly periodMs: number; readonly starts: number; readonly group?: string };

/** A job's keys and the state of its buckets, as `getJob` reads them. */
export interface FlowState {
  readonly concurrencyKey: string | null;
  readonly rateKeys: Record<string, string> | null;
  readonly buckets: Record<string, { running: number; starts: string[] }> | null;
}

/** A scope without its period: a key stored under another period of it (the limit's periodMs changed) is found as the admission finds it. */
const scopeBase = (scope: string) => scope.replace(/[^:]*$/, "");

/** The first limit of the job in code that holds it back now, from the buckets' state; null when none does. */
export const waitingOn = (job: string, flow: FlowState, spec: FlowSpec | undefined, now = Date.now()): WaitingOn | null => {
  const rules = spec?.rules.get(job);
  if (!rules) return null;
  const buckets = flow.buckets ?? {};
  // A limit the job gained after it was enqueued has no key stored with it, and does not apply to it.
  if (rules.concurrency !== undefined && flow.concurrencyKey !== null) {
    const key = flow.concurrencyKey;
    const running = buckets[`c:${job}:${key}`]?.running ?? 0;
    if (running >= rules.concurrency) return { kind: "concurrency", key, limit: rules.concurrency, running };
  }
  for (const rule of rules.rates) {
    const key = flow.rateKeys?.[rule.scope] ??
      Object.entries(flow.rateKeys ?? {}).find(([k]) => scopeBase(k) === scopeBase(rule.scope) && !rules.rates.some((r) => r.scope === k))?.[1];
    if (key === undefined) continue;
    const since = now - rule.periodMs - ratePadMs(rule.periodMs);
    const starts = (buckets[`r:${rule.scope}:${key}`]?.starts ?? []).filter((s) => Date.parse(s) > since).length;
    if (starts >= rule.limit) {
      const group = rule.scope.startsWith("g:") ? rule.scope.slice(2, rule.scope.lastIndexOf(":")) : undefined;
      return { kind: "rate", key, limit: rule.limit, periodMs: rule.periodMs, starts, ...(group ? { group } : {}) };
    }
  }
  return null;
};

import type { Schedule } from "./define.js";

/** JSON with object keys sorted, so the same definition hashes the same in every deployment. */
const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
};

// Web Crypto: the same on Node 20, Vercel and Cloudflare Workers.
const sha256 = async (text: string): Promise<string> => {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
};

/**
 * What a row in the table is compared on: everything that changes which jobs are enqueued.
 * `dayMatch` counts only when "and" (undefined keys drop out), so definitions that do not use
 * it hash as they did before it existed and are not rewritten by the deploy that adds it.
 */
export const definitionHash = (s: Pick<Schedule, "name" | "cron" | "timezone" | "job" | "payload" | "missed" | "dayMatch">): Promise<string> =>
  sha256(
    canonicalJson({
      name: s.name, cron: s.cron, timezone: s.timezone, job: s.job, payload: s.payload, missed: s.missed,
      dayMatch: s.dayMatch === "and" ? "and" : undefined,
    }),
  );

/** The hash of a whole set of definitions (order-independent). */
export const setHash = (hashes: readonly string[]): Promise<string> => sha256([...hashes].sort().join("\n"));

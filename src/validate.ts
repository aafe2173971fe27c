import { JobsError } from "./errors.js";
import type { AnyJob } from "./job.js";

/** Shapes zod's issues into plain JSON for API clients: where, what, which check. */
export const describeIssues = (issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string }>) =>
  issues.map((i) => ({ path: i.path.map((k) => (typeof k === "symbol" ? String(k) : k)), message: i.message, code: i.code }));

/** Postgres jsonb cannot hold U+0000 in a string or a key; find the first one so the error can point at it. */
export const findNul = (value: unknown, path: Array<string | number> = []): Array<string | number> | undefined => {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], [...path, i]);
      if (hit) return hit;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes("\u0000")) return [...path, k];
      const hit = findNul(v, [...path, k]);
      if (hit) return hit;
    }
  }
  return undefined;
};

const encoder = new TextEncoder();

/**
 * Checks one payload for a job and returns what will be stored: the payload as
 * it reads back from JSON, which is exactly what the handler will later parse.
 * Throws `unknown_job`, `payload_too_large` or `invalid_payload`.
 */
export const checkPayload = (
  registry: ReadonlyMap<string, AnyJob>,
  name: unknown,
  payload: unknown,
  maxBytes: number,
  where: Record<string, unknown> = {},
): { job: AnyJob; stored: unknown } => {
  const job = typeof name === "string" ? registry.get(name) : undefined;
  if (!job) {
    throw new JobsError("unknown_job", `no job named ${JSON.stringify(name)} is defined`, { ...where, job: name });
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (e) {
    throw new JobsError("invalid_payload", `payload for ${job.name} is not JSON: ${(e as Error).message}`, where);
  }
  if (text === undefined) throw new JobsError("invalid_payload", `payload for ${job.name} is missing`, where);
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so short texts need no encoding to be measured.
  const bytes = text.length * 3 <= maxBytes ? 0 : encoder.encode(text).length;
  if (bytes > maxBytes) {
    throw new JobsError("payload_too_large", `payload for ${job.name} is ${bytes} bytes; the limit is ${maxBytes}`, {
      ...where,
      bytes,
      limit: maxBytes,
    });
  }
  const stored: unknown = JSON.parse(text);
  // JSON.stringify writes U+0000 as the escape \u0000, so a text without it holds none.
  const nul = text.includes("\\u0000") ? findNul(stored) : undefined;
  if (nul) {
    throw new JobsError("invalid_payload", `payload for ${job.name} holds a U+0000 character, which PostgreSQL cannot store`, {
      ...where,
      issues: [{ path: nul, message: "U+0000 is not allowed in strings", code: "nul_character" }],
    });
  }
  const parsed = job.schema.safeParse(stored);
  if (!parsed.success) {
    throw new JobsError("invalid_payload", `payload for ${job.name} does not match its schema`, {
      ...where,
      issues: describeIssues(parsed.error.issues),
    });
  }
  return { job, stored };
};

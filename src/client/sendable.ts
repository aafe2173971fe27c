// What JSON cannot carry as given: JSON.stringify writes NaN and ±Infinity as null, which the server
// reads as "not given" (an option) or as null (in a payload). The library refuses them; the client does
// too, before sending, with the codes the library gives. An invalid Date is refused as an option (the
// library refuses such a runAt); in a payload it is left alone, as the library leaves it (it becomes null).
import { MAX_PAYLOAD_DEPTH } from "../json-limits.js";

type Unsendable = { readonly path: Array<string | number>; readonly deep?: true };

/**
 * The path to the first NaN, ±Infinity or bigint (and, with `dates`, invalid Date) in a value, or to
 * where it nests deeper than a payload may (`deep`; JSON.stringify would overflow its stack thousands
 * deep, a RangeError), or undefined.
 */
const unsendable = (value: unknown, dates: boolean, path: Array<string | number> = [], seen = new Set<object>()): Unsendable | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : { path };
  // JSON.stringify throws on a bigint: refused here with a code, as the library refuses it.
  if (typeof value === "bigint") return { path };
  if (value instanceof Date) return dates && Number.isNaN(value.getTime()) ? { path } : undefined;
  if (value === null || typeof value !== "object" || seen.has(value) || typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
  if (path.length >= MAX_PAYLOAD_DEPTH) return { path, deep: true };
  seen.add(value);
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    const hit = unsendable(v, dates, [...path, k], seen);
    if (hit) return hit;
  }
  return undefined;
};

/** Why one enqueue item cannot be sent as given (code, message, details), or undefined when it can. */
export const unsendableItem = (
  given: object,
  where: { index?: number },
): { code: "invalid_options" | "invalid_payload"; message: string; details: Record<string, unknown> } | undefined => {
  const item = given as Record<string, unknown>;
  for (const [field, value] of Object.entries(item)) {
    if (field === "payload" || field === "job") continue;
    const hit = unsendable(value, true);
    if (hit) {
      const name = [field, ...hit.path].join(".");
      const what = hit.deep ? `nested deeper than ${MAX_PAYLOAD_DEPTH} levels` : value instanceof Date ? "an invalid Date" : "not a finite number";
      // The field as the library names it: a nested option's path (debounce.maxWaitMs).
      return { code: "invalid_options", message: `${name} is ${what}`, details: { ...where, field: hit.path.length > 0 && !hit.deep ? name : field } };
    }
  }
  return unsendablePayload(item.payload, `payload for ${String(item.job)}`, where);
};

/** Why a payload (an enqueue's, an edited replay's) cannot be sent as given, or undefined when it can. */
export const unsendablePayload = (
  payload: unknown,
  what: string,
  where: { index?: number } = {},
): { code: "invalid_payload"; message: string; details: Record<string, unknown> } | undefined => {
  const at = unsendable(payload, false);
  if (!at) return undefined;
  // As the library says it (its depth counts the levels, 101 of them here).
  if (at.deep) return { code: "invalid_payload", message: `${what} is nested deeper than ${MAX_PAYLOAD_DEPTH} levels`, details: { ...where } };
  const message = "a number JSON cannot hold (NaN, Infinity or a bigint)";
  return { code: "invalid_payload", message: `${what} holds ${message}`, details: { ...where, issues: [{ path: at.path, message, code: "not_finite" }] } };
};

/**
 * What JSON may hold here: how deep a payload nests, and integers a JavaScript reader would round.
 * A leaf, so the HTTP body parser, the CLI, the dashboard and the typed client refuse what the
 * library refuses without pulling in the enqueue path.
 */

/** Payloads nested deeper are refused: walking them recursively (zod, JSON.stringify, PostgreSQL's parser) could overflow a stack. */
export const MAX_PAYLOAD_DEPTH = 100;

/**
 * Whether a value nests objects and arrays deeper than `max` (a scalar is 0 deep, `{}` 1), as its JSON
 * would: a walk with its own stack, so a value thousands deep is measured, not a stack overflow.
 * Values with `toJSON` (a Date) count as scalars; a cycle is not followed.
 */
export const valueDeeperThan = (value: unknown, max: number): boolean => {
  const stack: Array<[unknown, number]> = [[value, 0]];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object" || seen.has(v) || typeof (v as { toJSON?: unknown }).toJSON === "function") continue;
    if (depth + 1 > max) return true;
    seen.add(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
};

/**
 * Whether valid JSON text nests objects and arrays deeper than `max` (a scalar is 0 deep, `{}` 1):
 * one pass over its characters, brackets inside strings skipped, nothing allocated (a walk of the
 * parsed value cost a fifth of an enqueue's checks).
 */
export const jsonTextDeeperThan = (text: string, max: number): boolean => {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: to its closing quote, over escapes.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
  return false;
};

/**
 * The first integer in JSON text that JSON.parse would round (past 2^53: a 64-bit id), else undefined.
 * PostgreSQL would have kept it exactly; a JavaScript server cannot, so it is refused rather than changed.
 * Strings, fractions and exponents are skipped (a fraction's last digits are rounded by every JSON reader).
 */
export const inexactInteger = (text: string): string | undefined => {
  if (!/\d{16}/.test(text)) return undefined;
  for (const m of text.matchAll(/"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])(-?\d{16,})(?![\d.eE])/g)) {
    const digits = m[1];
    if (digits === undefined) continue;
    const n = Number(digits);
    if (!Number.isFinite(n) || BigInt(digits) !== BigInt(n)) return digits;
  }
  return undefined;
};

/** What is wrong with JSON text holding such an integer (a request body, a payload given to the CLI or the dashboard), or undefined. */
export const inexactIntegerProblem = (text: string): string | undefined => {
  const digits = inexactInteger(text);
  if (digits === undefined) return undefined;
  return `the number ${digits.length > 40 ? `${digits.slice(0, 40)}…` : digits} cannot be held exactly (integers past 2^53 are rounded): send it as a string`;
};

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses `250`, `250ms`, `30s`, `2m`, `1h`, `7d` (and `1.5s`) into milliseconds.
 * Returns undefined for anything else so the caller can name the setting in its error.
 */
export const parseDuration = (input: string | number): number | undefined => {
  if (typeof input === "number") return Number.isFinite(input) && input >= 0 ? input : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(input);
  if (!match) return undefined;
  const value = Number(match[1]) * UNITS[match[2] ?? "ms"]!;
  return Number.isFinite(value) ? Math.round(value) : undefined;
};

import { storableText } from "../error-text.js";
/** Plain-text tables for people; scripts use --json. */
export const table = (headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
};

/** Keeps one table row on one line. */
export const clip = (text: string | null | undefined, max = 60): string => {
  if (!text) return "";
  // Clipped on a whole character: half an emoji printed as U+FFFD.
  return storableText(text.replace(/\s+/g, " "), max);
};

export const ms = (value: number | null | undefined): string => {
  if (value === null || value === undefined) return "-";
  if (value < 1_000) return `${value} ms`;
  if (value < 60_000) return `${(value / 1_000).toFixed(1)} s`;
  if (value < 3_600_000) return `${(value / 60_000).toFixed(1)} min`;
  return `${(value / 3_600_000).toFixed(1)} h`;
};

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A value as one shell word: quoted when it holds anything a shell would read otherwise. */
const shellWord = (value: string): string => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);

/**
 * The command for the next page: the same command with the same filters and limit (every string
 * option given, in the order given), and the cursor.
 */
export const nextPage = (command: string, values: Record<string, unknown>, cursor: string): string => {
  const same = Object.entries(values).flatMap(([name, v]) => (name !== "cursor" && typeof v === "string" ? [`--${name} ${shellWord(v)}`] : []));
  return `more: pgtick ${command} ${[...same, `--cursor ${cursor}`].join(" ")}`;
};

/**
 * Cron expression → the values each field allows. No dependencies, no Node APIs.
 *
 * Accepted: 5 fields (minute first) or 6 (seconds first), or an alias (see ALIASES). Each
 * field: `*` or `?`, a value, a range `a-b`, a step `*∕n`, `a∕n`, `a-b∕n`, and lists of
 * these; month and weekday names (JAN-DEC, SUN-SAT, any case); weekday 7 = Sunday;
 * `L` in the day of month (last day); `nL` in the day of week (last weekday n of the month);
 * `n#k` alone in the day of week (k-th weekday n, k 1-5); `H`, `H(a-b)`, `H∕n`, `H(a-b)∕n`
 * (and `HL`, `H#k` in the day of week): a value picked by hashing the seed (the schedule name).
 */
import { hashedValues, hashedWeekday, type HashRange } from "./cron-hash.js";

export class CronSyntaxError extends Error {}

export interface DayOfMonthField {
  /** Days 1-31 named by the field (all 31 for `*`). */
  readonly days: readonly number[];
  /** `L`: the month's last day. */
  readonly last: boolean;
  /** The field is literally `*` or `?`: it leaves the day to the other day field. */
  readonly any: boolean;
}

export interface DayOfWeekField {
  /** Weekdays 0-6 (Sunday 0) matching on any week. */
  readonly days: readonly number[];
  /** `nL`: weekdays matching only in the month's last seven days. */
  readonly last: readonly number[];
  /** `n#k`: weekdays matching only in the k-th seven days of the month. */
  readonly nth?: { readonly days: readonly number[]; readonly week: number };
  readonly any: boolean;
}

export interface CronFields {
  readonly second: readonly number[];
  readonly minute: readonly number[];
  readonly hour: readonly number[];
  readonly dayOfMonth: DayOfMonthField;
  /** Months 1-12. */
  readonly month: readonly number[];
  readonly dayOfWeek: DayOfWeekField;
  /** The six field texts, seconds first (aliases expanded, `0` seconds added to 5 fields). */
  readonly source: readonly string[];
}

const ALIASES: Readonly<Record<string, string>> = {
  "@yearly": "0 0 0 1 1 *",
  "@annually": "0 0 0 1 1 *",
  "@monthly": "0 0 0 1 * *",
  "@weekly": "0 0 0 * * 0",
  "@daily": "0 0 0 * * *",
  "@midnight": "0 0 0 * * *",
  "@hourly": "0 0 * * * *",
  "@minutely": "0 * * * * *",
  "@secondly": "* * * * * *",
  "@weekdays": "0 0 0 * * 1-5",
  "@weekends": "0 0 0 * * 0,6",
};

interface Spec {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  /** Three-letter names, the first standing for `nameBase`. */
  readonly names?: readonly string[];
  readonly nameBase?: number;
  /** Where a bare `H`, without a step, may land (day of month: 1-28, a day every month has). */
  readonly hash: HashRange;
}

const spec = (label: string, min: number, max: number, extra: Partial<Spec> = {}): Spec => ({ label, min, max, hash: { lo: min, hi: max }, ...extra });
const SECOND = spec("second", 0, 59);
const MINUTE = spec("minute", 0, 59);
const HOUR = spec("hour", 0, 23);
const DAY_OF_MONTH = spec("day-of-month", 1, 31, { hash: { lo: 1, hi: 28 } });
const MONTH = spec("month", 1, 12, { names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], nameBase: 1 });
const DAY_OF_WEEK = spec("day-of-week", 0, 7, { names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], nameBase: 0, hash: { lo: 0, hi: 6 } });

const fail = (s: Spec, text: string, why: string): never => {
  throw new CronSyntaxError(`${s.label} field "${text}": ${why}`);
};

/** One value: digits or (month, weekday) a name. */
const value = (s: Spec, text: string, whole: string): number => {
  if (text === "") fail(s, whole, "a value is missing");
  let n: number | undefined;
  if (/^\d+$/.test(text)) n = Number(text);
  else if (s.names) {
    const i = s.names.indexOf(text.toUpperCase());
    if (i >= 0) n = i + s.nameBase!;
  }
  if (n === undefined) {
    const kind = s.names ? `a number or a name (${s.names[0]}-${s.names[s.names.length - 1]})` : "a number";
    return fail(s, whole, `"${text}" is not ${kind}`);
  }
  if (n < s.min || n > s.max) fail(s, whole, `${text} is out of range ${s.min}-${s.max}`);
  return n;
};

const stepOf = (s: Spec, text: string, whole: string): number => {
  if (!/^\d+$/.test(text) || Number(text) < 1) fail(s, whole, `the step after "/" must be a whole number from 1 up, not "${text}"`);
  return Number(text);
};

/** One list item without L or #: `*`, `?`, `a`, `a-b`, any of them with `/n`, or an H form. */
const item = (s: Spec, text: string, seed: string): number[] => {
  const parts = text.split("/");
  if (parts.length > 2) fail(s, text, `only one "/" is allowed`);
  const [base, stepText] = parts as [string, string | undefined];
  const step = stepText === undefined ? undefined : stepOf(s, stepText, text);
  if (base.startsWith("H")) return hashedValues(hashRange(s, base, text, step !== undefined), step, seed, s.label);
  let lo: number;
  let hi: number;
  if (base === "*" || base === "?") [lo, hi] = [s.min, s.max];
  else if (base.includes("-")) {
    const ends = base.split("-");
    if (ends.length !== 2) fail(s, text, `a range has two ends, as in 1-5`);
    [lo, hi] = [value(s, ends[0]!, text), value(s, ends[1]!, text)];
    if (lo > hi) fail(s, text, `the range runs backwards (${lo} > ${hi})`);
  } else {
    lo = value(s, base, text);
    hi = step === undefined ? lo : s.max;
  }
  const out: number[] = [];
  for (let v = lo; v <= hi; v += step ?? 1) out.push(v);
  return out;
};

/** `H` or `H(a-b)`: the values the hash may pick from; a range is narrowed to the field's. */
const hashRange = (s: Spec, base: string, whole: string, stepped: boolean): HashRange => {
  if (base === "H") return stepped ? { lo: s.min, hi: s.max } : s.hash;
  const m = /^H\((\d+)-(\d+)\)$/.exec(base);
  if (!m) return fail(s, whole, `H takes the forms H, H(a-b), H/n and H(a-b)/n`);
  const [a, b] = [Number(m[1]), Number(m[2])];
  if (a > b) fail(s, whole, `the range runs backwards (${a} > ${b})`);
  const lo = Math.max(a, s.min);
  const hi = Math.min(b, s.max);
  if (lo > hi) fail(s, whole, `no value of the range lies in ${s.min}-${s.max}`);
  return { lo, hi };
};

const sorted = (values: Iterable<number>): number[] => [...new Set(values)].sort((a, b) => a - b);

const plainField = (s: Spec, text: string, seed: string): number[] => {
  const items = text.split(",");
  if (items.some((i) => i === "")) fail(s, text, `a list has a value between each pair of commas`);
  // Quartz and EventBridge read "?" as "no specific value" of a day field only: "0 9 * * ? *" (daily at 09:00,
  // with a year last) read as six fields was every hour at minute 9.
  if (items.some((i) => i.split("/")[0] === "?")) {
    fail(s, text, `"?" is for the day fields only; use * (a year field last, as EventBridge writes, is one field too many)`);
  }
  return sorted(items.flatMap((i) => item(s, i, seed)));
};

const dayOfMonth = (text: string, seed: string): DayOfMonthField => {
  const items = text.split(",");
  if (items.some((i) => i === "")) fail(DAY_OF_MONTH, text, `a list has a value between each pair of commas`);
  let last = false;
  const days: number[] = [];
  for (const i of items) {
    if (i === "L") last = true;
    else if (i.includes("W")) fail(DAY_OF_MONTH, text, `W (nearest weekday) is not supported`);
    else if (i.includes("L")) fail(DAY_OF_MONTH, text, `L (the last day) stands alone, without offset, range or step`);
    else if (i.includes("#")) fail(DAY_OF_MONTH, text, `# belongs in the day-of-week field`);
    else days.push(...item(DAY_OF_MONTH, i, seed));
  }
  return { days: sorted(days), last, any: text === "*" || text === "?" };
};

/** A single weekday before L or #: a number 0-7, a name or H. */
const weekday = (base: string, whole: string, seed: string): number => (base === "H" ? hashedWeekday(seed, DAY_OF_WEEK.label) : value(DAY_OF_WEEK, base, whole) % 7);

const dayOfWeek = (text: string, seed: string): DayOfWeekField => {
  const s = DAY_OF_WEEK;
  const any = text === "*" || text === "?";
  if (text.includes("#")) {
    const m = /^([^#,/-]+)#(\d+)$/.exec(text);
    if (!m) return fail(s, text, `# stands alone, after a single weekday, as in 1#2 (the second Monday)`);
    const week = Number(m[2]);
    if (week < 1 || week > 5) fail(s, text, `the week after # is 1-5, not ${m[2]}`);
    const days = m[1] === "*" || m[1] === "?" ? [0, 1, 2, 3, 4, 5, 6] : [weekday(m[1]!, text, seed)];
    return { days: [], last: [], nth: { days, week }, any };
  }
  const items = text.split(",");
  if (items.some((i) => i === "")) fail(s, text, `a list has a value between each pair of commas`);
  const days: number[] = [];
  const last: number[] = [];
  for (const i of items) {
    if (i.endsWith("L")) {
      const base = i.slice(0, -1);
      if (base === "" || /[-/*?]/.test(base)) fail(s, text, `L follows a single weekday, as in 5L (the last Friday)`);
      last.push(weekday(base, text, seed));
    } else days.push(...item(s, i, seed).map((d) => d % 7));
  }
  return { days: sorted(days), last: sorted(last), any };
};

/** Parses an expression; `seed` decides what `H` picks. Throws CronSyntaxError. */
export const parseCron = (expression: string, seed: string): CronFields => {
  let text = expression.trim();
  if (text.startsWith("@")) {
    const expanded = ALIASES[text];
    if (expanded === undefined) throw new CronSyntaxError(`unknown alias ${JSON.stringify(text)}; known: ${Object.keys(ALIASES).join(", ")}`);
    text = expanded;
  }
  const parts = text === "" ? [] : text.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    throw new CronSyntaxError(`expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got ${parts.length}`);
  }
  const f = parts.length === 5 ? ["0", ...parts] : parts;
  return {
    second: plainField(SECOND, f[0]!, seed),
    minute: plainField(MINUTE, f[1]!, seed),
    hour: plainField(HOUR, f[2]!, seed),
    dayOfMonth: dayOfMonth(f[3]!, seed),
    month: plainField(MONTH, f[4]!, seed),
    dayOfWeek: dayOfWeek(f[5]!, seed),
    source: f,
  };
};

// The one reading of an ISO 8601 time that callers give (an enqueue's runAt, a runs filter's range).
// `new Date(text)` takes far more than ISO 8601 ("1" is 2001-01-01, "Fri, 07 Mar 2031" local time)
// and rolls impossible dates over ("2031-02-31" is March 3rd); neither may pass for a time.

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/**
 * Milliseconds since the epoch of a date (`2031-01-02`, midnight UTC) or a date and time with its
 * offset (`2031-01-02T03:04:05Z`, `2031-01-02T04:04+01:00`), or undefined when the text is neither
 * or names a day or time that does not exist. A time without an offset is refused: on a server,
 * local time means nothing.
 */
export const parseIsoTime = (text: string): number | undefined => parseIsoInstant(text)?.ms;

/**
 * `parseIsoTime` with the microseconds below its milliseconds (0-999) kept apart, as PostgreSQL
 * keeps them: a time the API returned (to the microsecond) compares with the rows it came from.
 */
export const parseIsoInstant = (text: string): { readonly ms: number; readonly micros: number } | undefined => {
  const m = ISO_TIME.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = "00", mi = "00", s = "00", fraction = "", zone = "Z"] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const [hour, minute, second] = [Number(h), Number(mi), Number(s)];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (zone !== "Z") {
    const digits = zone.replace(":", "");
    const [oh, om] = [Number(digits.slice(1, 3)), Number(digits.slice(3, 5))];
    if (oh > 23 || om > 59) return undefined;
    offset = (digits[0] === "-" ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  const digits = fraction.padEnd(6, "0");
  utc.setUTCHours(hour, minute, second, Number(digits.slice(0, 3)));
  return { ms: utc.getTime() - offset, micros: Number(digits.slice(3, 6)) };
};

/** An instant of `parseIsoInstant` as UTC ISO 8601 text, to the microsecond. */
export const isoWithMicros = ({ ms, micros }: { readonly ms: number; readonly micros: number }): string =>
  micros === 0 ? new Date(ms).toISOString() : new Date(ms).toISOString().replace("Z", `${String(micros).padStart(3, "0")}Z`);

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
export const parseIsoTime = (text: string): number | undefined => {
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
  utc.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, "0").slice(0, 3)));
  return utc.getTime() - offset;
};

import type { CronRule } from "./cron.js";

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

const pad = (n: number) => String(n).padStart(2, "0");
const list = (xs: readonly string[]) => (xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);

/** A step pattern starting at the field's minimum: 0,15,30,45 → 15. */
const stepOf = (values: readonly number[], size: number): number | undefined => {
  if (values.length < 2 || values[0] !== 0) return undefined;
  const step = values[1]!;
  if (size % step !== 0 || values.length !== size / step) return undefined;
  return values.every((v, i) => v === i * step) ? step : undefined;
};

const timeOfDay = (rule: CronRule): string | undefined => {
  const { second: seconds, minute: minutes, hour: hours } = rule.fields;
  if (seconds.length !== 1 || seconds[0] !== 0) {
    if (seconds.length === 60 && minutes.length === 60 && hours.length === 24) return "every second";
    const s = stepOf(seconds, 60);
    if (s && minutes.length === 60 && hours.length === 24) return `every ${s} seconds`;
    return undefined;
  }
  if (hours.length === 24) {
    if (minutes.length === 60) return "every minute";
    const step = stepOf(minutes, 60);
    if (step) return `every ${step} minutes`;
    return minutes.length === 1 ? `every hour at minute ${minutes[0]}` : `every hour at minutes ${list(minutes.map(String))}`;
  }
  if (minutes.length === 1 && hours.length <= 6) return `at ${list(hours.map((h) => `${pad(h)}:${pad(minutes[0]!)}`))}`;
  const hstep = stepOf(hours, 24);
  if (minutes.length === 1 && hstep) return `every ${hstep} hours at minute ${minutes[0]}`;
  return undefined;
};

const days = (rule: CronRule): string | undefined => {
  const { dayOfMonth: dom, dayOfWeek: dow, month: months } = rule.fields;
  if (dom.last || dow.last.length > 0 || dow.nth) return undefined;
  const allDom = dom.any || dom.days.length === 31;
  const allDow = dow.any || dow.days.length === 7;
  // Both restricted: days match either field, which reads badly in words unless one covers every day.
  if (!dom.any && !dow.any && !allDom && !allDow) return undefined;
  const parts: string[] = [];
  const d = dow.days.join(",");
  if (dom.any && !allDow) parts.push(d === "1,2,3,4,5" ? "on weekdays" : d === "0,6" ? "on weekends" : `on ${list(dow.days.map((x) => DAYS[x]!))}`);
  if (dow.any && !allDom) parts.push(`on day ${list(dom.days.map(String))} of the month`);
  if (months.length !== 12) parts.push(`in ${list(months.map((m) => MONTHS[m - 1]!))}`);
  return parts.join(" ");
};

/** Plain words for the common shapes, e.g. "every hour at minute 0 (America/New_York)"; the expression itself otherwise. */
export const describeRule = (rule: CronRule): string => {
  const time = timeOfDay(rule);
  const when = days(rule);
  if (time === undefined || when === undefined) return `cron "${rule.expression}" (${rule.zone})`;
  const daily = !time.startsWith("every") && when === "" ? `every day ${time}` : time;
  return `${[daily, when].filter(Boolean).join(" ")} (${rule.zone})`;
};

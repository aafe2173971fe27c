import type { Logger, LogLevel } from "../log.js";
import { inert } from "../terminal.js";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const COLOR: Record<LogLevel, string> = { debug: "\x1b[2m", info: "\x1b[36m", warn: "\x1b[33m", error: "\x1b[31m" };

// One line each, whatever a message or a field holds (a handler's text, a caller's correlation id): see terminal.ts.
const value = (v: unknown): string => inert(typeof v === "string" ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v) ?? String(v), false);

/** The library's events as short lines for a terminal: time, level, message, fields. LOG_FORMAT=json keeps JSON lines. */
export const devLogger = (minLevel: LogLevel, write: (line: string) => void, color: boolean): Logger => ({
  log(level, msg, fields = {}) {
    if (ORDER[level] < ORDER[minLevel]) return;
    const time = new Date().toTimeString().slice(0, 8);
    const rest = Object.entries(fields)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `${k}=${value(v)}`)
      .join(" ");
    const tag = level.padEnd(5);
    write(`${time} ${color ? `${COLOR[level]}${tag}\x1b[0m` : tag} ${inert(msg, false)}${rest ? `  ${rest}` : ""}`);
  },
});

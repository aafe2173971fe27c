export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

/** Where the library's structured events go. The default writes one JSON object per line. */
export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A level as given by a handler (plain JavaScript may pass anything): one of the four, else `info`. */
export const logLevel = (value: unknown): LogLevel => (typeof value === "string" && Object.hasOwn(ORDER, value) ? (value as LogLevel) : "info");

/** JSON.stringify that cannot throw on a field: bigints as strings, an object inside itself as "[circular]". */
const lineJson = (line: Record<string, unknown>): string => {
  // The objects from the root down to the value: one met twice elsewhere (a shared one) is written twice.
  const path: unknown[] = [];
  return JSON.stringify(line, function (this: unknown, _key, value: unknown) {
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "object" && value !== null) {
      while (path.length > 0 && path[path.length - 1] !== this) path.pop();
      if (path.includes(value)) return "[circular]";
      path.push(value);
    }
    return value;
  });
};

export const jsonLogger = (
  minLevel: LogLevel = "info",
  write: (line: string) => void = (line) => console.log(line),
): Logger => ({
  log(level, msg, fields) {
    if (ORDER[level] < ORDER[minLevel]) return;
    const time = new Date().toISOString();
    // Fields never overwrite the line's own time, level and message (which stay first).
    const line: Record<string, unknown> = { time, level, msg, ...fields };
    Object.assign(line, { time, level, msg });
    write(lineJson(line));
  },
});

/**
 * The fields that can be written on their own (a getter or toJSON that throws, at any depth, cannot),
 * and `fieldsDropped`: one bad field costs only itself. A Proxy whose keys throw costs them all.
 */
export const writableFields = (fields: LogFields): LogFields => {
  const kept: LogFields = {};
  try {
    for (const key of Object.keys(fields)) {
      try {
        lineJson({ v: fields[key] });
        kept[key] = fields[key];
      } catch {
        // Dropped.
      }
    }
  } catch {
    // Dropped, all of them.
  }
  return { ...kept, fieldsDropped: true };
};

/**
 * The logger the library calls: one that throws (a field it cannot serialise, a broken sink) never
 * fails a run or a tick. The line is tried again with only the fields that can be written (the job's
 * id and name among them), then dropped.
 */
export const safeLogger = (logger: Logger): Logger => ({
  log(level, msg, fields) {
    try {
      logger.log(level, msg, fields);
    } catch {
      try {
        logger.log(level, msg, writableFields(fields ?? {}));
      } catch {
        // Nothing left to log with.
      }
    }
  },
});

export const silentLogger: Logger = { log() {} };

/** Collects events in memory: for tests and for callers that ship logs elsewhere. */
export const memoryLogger = (): Logger & { entries: Array<{ level: LogLevel; msg: string } & LogFields> } => {
  const entries: Array<{ level: LogLevel; msg: string } & LogFields> = [];
  return { entries, log: (level, msg, fields) => void entries.push({ ...fields, level, msg }) };
};

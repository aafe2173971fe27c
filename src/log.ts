export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

/** Where the library's structured events go. The default writes one JSON object per line. */
export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const jsonLogger = (
  minLevel: LogLevel = "info",
  write: (line: string) => void = (line) => console.log(line),
): Logger => ({
  log(level, msg, fields) {
    if (ORDER[level] < ORDER[minLevel]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
  },
});

export const silentLogger: Logger = { log() {} };

/** Collects events in memory: for tests and for callers that ship logs elsewhere. */
export const memoryLogger = (): Logger & { entries: Array<{ level: LogLevel; msg: string } & LogFields> } => {
  const entries: Array<{ level: LogLevel; msg: string } & LogFields> = [];
  return { entries, log: (level, msg, fields) => void entries.push({ ...fields, level, msg }) };
};

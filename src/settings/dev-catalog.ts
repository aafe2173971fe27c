import { type Catalog, reader, text, v, VARS } from "./catalog.js";
import { durationSetting, onOff, oneOf, port } from "./parse.js";

/** The variables only `npm run dev` and the CLI read: a deployment never parses them, so they stay out of its bundle. */
export const DEV_VARS = {
  PORT: v("dev", port),
  HOST: v("dev", text),
  TICK_INTERVAL: v("dev", (name, raw) => durationSetting(name, raw, 100)),
  DEV_DIR: v("dev", text),
  // PostgreSQL itself refuses port 0: refused here, before it is started.
  DEV_PG_PORT: v("dev", (name, raw) => port(name, raw, 1)),
  JOBS_MODULE: v("dev", text),
  DEV_SEED: v("dev", (n, raw) => onOff(n, raw)),
  LOG_LEVEL: v("dev", oneOf("debug", "info", "warn", "error")),
  LOG_FORMAT: v("dev", oneOf("text", "json")),
  NO_COLOR: v("dev", text),
} as const satisfies Catalog;

/** Every variable the project reads, deployed or local: what `npm run dev` and the CLI check, and the README lists. */
export const EVERY_VAR = { ...VARS, ...DEV_VARS } as const satisfies Catalog;
export type AnyVarName = keyof typeof EVERY_VAR;

export const readDev = reader(DEV_VARS);

import type { Db } from "../db.js";
import { errorText } from "../error-text.js";
import type { TickEnv } from "./types.js";

/**
 * What rides on the tick (schedules) acts on what its probe columns said in the first statement. Its statements go
 * through `db`, bounded and counted like the tick's own. Returns how many jobs they enqueued; a broken extension is
 * logged and counts none, so it cannot stop the queue from draining.
 */
export const afterProbes = async (env: TickEnv, probe: Record<string, unknown>, db: Db): Promise<number> => {
  let enqueued = 0;
  for (const extension of env.extensions ?? []) {
    try {
      enqueued += await extension.afterProbe(probe, { db, tables: env.tables, logger: env.logger });
    } catch (error) {
      env.logger.log("error", "tick extension failed", { error: errorText(error) });
    }
  }
  return enqueued;
};

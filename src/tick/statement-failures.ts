import { databaseUnavailable, sqlState } from "../db.js";
import { isJobsError } from "../errors.js";
import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";

/** How long a tick waits before it sends again after one, two, three or more failed statements in a row. */
export const RETRY_AFTER_FAILURE_MS = [250, 500, 1_000, 2_000] as const;

/**
 * A tick's failed statements. A statement is atomic, so one the server refused changed nothing: the
 * tick's runs are still its own under their leases, and what it carried is still owed (one whose answer
 * was lost may have committed: sent again, its settlements are refused by their fences). The tick keeps its
 * runs going and sends again after a pause that grows with each failure in a row (claiming nothing
 * meanwhile); one statement that succeeds ends the streak. Stopping at the first failure instead
 * requeued runs whose handlers went on: another tick ran them beside the first (or, at their last
 * attempt, they became dead letters while they ran), for a refused second connection or one
 * statement timeout.
 */
export class StatementFailures {
  private streak = 0;
  private until = 0;
  /** The failure that has not been followed by a statement that succeeded (or one no success mends). */
  last: { error: unknown } | undefined;
  /**
   * A failure no retry mends: a setting, or tables behind this release (`invalid_config`). The tick stops
   * and throws it, whatever its last statements did: a give-back that the old tables still take had the
   * tick end as if all was well, running nothing, the cron's status green.
   */
  fatal: { error: unknown } | undefined;

  /** Records a failure; returns how long the tick waits before it sends again. */
  failed(error: unknown, now: number): number {
    const wait = RETRY_AFTER_FAILURE_MS[Math.min(this.streak, RETRY_AFTER_FAILURE_MS.length - 1)]!;
    this.streak++;
    this.until = now + wait;
    this.last = { error };
    if (isJobsError(error) && error.code === "invalid_config") this.fatal ??= this.last;
    return wait;
  }

  private saidFatal: string | undefined;

  /** Logs a failure: with the wait before the next try, or, for one no retry mends, once and with none (its final statement fails alike). */
  say(logger: Logger, error: unknown, retryInMs: number, fields: Record<string, unknown>): void {
    const text = errorText(error);
    if (this.fatal && this.saidFatal === text) return;
    if (this.fatal) this.saidFatal = text;
    logger.log("error", "tick statement failed", { error: text, ...(this.fatal ? {} : { retryInMs }), ...fields });
  }

  succeeded(): void {
    this.streak = 0;
    this.until = 0;
    this.last = this.fatal;
  }

  /** When the tick may send again, if it must wait (else undefined). */
  waitUntil(now: number): number | undefined {
    return now < this.until ? this.until : undefined;
  }
}

/**
 * Whether the server refused the statement (it answered with an error: the transaction rolled back), as
 * opposed to an answer lost on the way (the connection cut, the client's own timeout), after which the
 * statement may have committed. A connection exception (class 08) is the second kind.
 */
export const refusedByServer = (error: unknown): boolean => {
  const code = sqlState(error);
  return code !== undefined && !code.startsWith("08");
};

/** A connection that could not be made: the statement never reached the server. */
export const neverSent = (error: unknown): boolean => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(code);
};

/**
 * Sends the tick's first statement, and again after its pause while it fails for want of the database
 * (a cut connection, a restarting server), up to once per pause of RETRY_AFTER_FAILURE_MS while `go()`.
 * A tick whose first statement failed holds no slot: it ended at once, its give-back statement succeeded
 * and cleared the failure, and it returned as if all was well, having run nothing.
 */
export const firstStatement = async <R>(
  send: () => Promise<R | undefined>,
  failures: StatementFailures,
  go: () => boolean,
  nap: (ms: number) => Promise<unknown>,
): Promise<R | undefined> => {
  let result = await send();
  for (let tries = 0; result === undefined && tries < RETRY_AFTER_FAILURE_MS.length; tries++) {
    if (!failures.last || failures.fatal || !databaseUnavailable(failures.last.error)) break;
    const at = failures.waitUntil(Date.now());
    if (at !== undefined) await nap(at - Date.now());
    if (!go()) break;
    result = await send();
  }
  return result;
};

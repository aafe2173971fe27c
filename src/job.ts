// Core types, so a job's schema can be built with `zod` or with the smaller `zod/mini`.
import type { $ZodType, input, output } from "zod/v4/core";
import type { Db } from "./db.js";
import { JobsError } from "./errors.js";
import { type Logger, logLevel } from "./log.js";
import { checkFlowLimits } from "./flow/define.js";
import { isMaxAttempts, MAX_ATTEMPTS } from "./terms.js";

export interface JobContext {
  readonly jobId: string;
  /** 1 on the first run; counts every claim, including runs cut short by a deadline or a killed tick. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly correlationId: string | null;
  /** Aborts at the tick's deadline or at the job's own timeout, whichever comes first. */
  readonly signal: AbortSignal;
  /**
   * The queue's database, for handlers that work in the same database (on a platform, the tick's
   * own connection). Statements sent here are the handler's own: the tick's fence does not cover them.
   */
  readonly db: Db;
  /** Logs with the job's id, name, attempt and correlation id attached. */
  readonly log: (level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;
}

/** Retry delay after failed attempt `attempt` (1-based), before jitter. */
export interface BackoffOptions {
  /** First retry delay. Default 5s. */
  readonly baseMs?: number | undefined;
  /** Ceiling. Default 1h. */
  readonly maxMs?: number | undefined;
  /** Multiplier per attempt. Default 2. */
  readonly factor?: number | undefined;
}

/** What a handler returns: checked against the job's `output` schema when it has one. */
export type HandlerResult<Out extends $ZodType | undefined> = Out extends $ZodType ? input<Out> : unknown;

export interface JobDefinition<Name extends string = string, Schema extends $ZodType = $ZodType, Out extends $ZodType | undefined = undefined> {
  readonly name: Name;
  readonly schema: Schema;
  // Method syntax on purpose: a job with a specific payload still fits `AnyJob`.
  handler(payload: output<Schema>, ctx: JobContext): Promise<HandlerResult<Out>> | HandlerResult<Out>;
  /**
   * The schema of what the handler returns. The return value is checked when the handler
   * returns (a mismatch fails the attempt) and recorded, parsed, as the run's output; the
   * typed client's `waitForResult` returns it typed.
   */
  readonly output?: Out;
  /** Attempts before the job is dead-lettered. Default: the `defaultMaxAttempts` setting (5). */
  readonly maxAttempts?: number | undefined;
  readonly backoff?: BackoffOptions | undefined;
  /** The run's own time limit; its signal aborts then and the attempt fails. */
  readonly timeoutMs?: number | undefined;
  /** Default priority for enqueues of this job (higher runs first). */
  readonly priority?: number | undefined;
  /** At most `limit` runs of this job at once, per key, across the whole deployment. */
  readonly concurrency?: ConcurrencyLimit<output<Schema>> | undefined;
  /** At most `limit` starts in any window of `periodMs`, per key; `group` shares one limit across jobs. Several must all hold. */
  readonly rateLimit?: RateLimit<output<Schema>> | readonly RateLimit<output<Schema>>[] | undefined;
}

/** Keys are computed from the parsed payload at enqueue time and stored with the job. */
export interface ConcurrencyLimit<P = unknown> {
  readonly limit: number;
  // Method syntax on purpose (bivariance): a job with a specific payload still fits `AnyJob`.
  key?(payload: P): string;
}

export interface RateLimit<P = unknown> {
  readonly limit: number;
  readonly periodMs: number;
  key?(payload: P): string;
  /** Jobs naming the same group share this limit (they must declare it alike). */
  readonly group?: string | undefined;
}

// A registry holds definitions of many payload types; handlers are only called with
// payloads their own schema parsed, so the registry can forget the precise type.
export type AnyJob = JobDefinition<string, $ZodType, $ZodType | undefined>;

// Names are data, not identifiers: any text without control characters, trimmed, 1-128 characters.
const NAME = /^(?! )[^\u0000-\u001f\u007f]{1,128}(?<! )$/u;

const MAX_TIMER_MS = 2_147_483_647;
const MAX_BACKOFF_MS = 365 * 24 * 3_600_000;

/** A zod 4 schema (classic or mini): what `safeParse` from zod/v4/core can run. */
const isSchema = (value: unknown): boolean => typeof value === "object" && value !== null && typeof (value as { _zod?: { run?: unknown } })._zod?.run === "function";

/**
 * Declares a named, schema-typed job. The handler receives the payload as the
 * schema parsed it and a context with the job's id, attempt and an abort signal.
 */
export const defineJob = <const Name extends string, Schema extends $ZodType, Out extends $ZodType | undefined = undefined>(
  definition: JobDefinition<Name, Schema, Out>,
): JobDefinition<Name, Schema, Out> => {
  if (!NAME.test(definition.name)) {
    throw new TypeError(
      `job name ${JSON.stringify(definition.name)} must be 1-128 characters with no control characters and no leading or trailing space`,
    );
  }
  // What TypeScript says of the definition, for plain JavaScript: each mistake would fail every run instead.
  if (typeof definition.handler !== "function") throw new TypeError(`job ${definition.name}: handler must be a function`);
  if (!isSchema(definition.schema)) throw new TypeError(`job ${definition.name}: schema must be a zod schema`);
  if (definition.output !== undefined && !isSchema(definition.output)) throw new TypeError(`job ${definition.name}: output must be a zod schema`);
  // The same bounds enqueue enforces, checked once here so a bad definition fails at start, not at every enqueue.
  const { maxAttempts, timeoutMs, priority, backoff } = definition;
  if (maxAttempts !== undefined && !isMaxAttempts(maxAttempts)) {
    throw new TypeError(`job ${definition.name}: maxAttempts must be an integer from 1 to ${MAX_ATTEMPTS}`);
  }
  // A timer longer than 2^31 - 1 ms fires at once (Node and workerd alike).
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new TypeError(`job ${definition.name}: timeoutMs must be a positive number of milliseconds, at most ${MAX_TIMER_MS} (about 24.8 days)`);
  }
  if (priority !== undefined && !(Number.isInteger(priority) && Math.abs(priority) <= 2_147_483_647)) {
    throw new TypeError(`job ${definition.name}: priority must be an integer`);
  }
  checkFlowLimits(definition.name, definition.concurrency, definition.rateLimit);
  for (const key of ["baseMs", "maxMs", "factor"] as const) {
    const value = backoff?.[key];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw new TypeError(`job ${definition.name}: backoff.${key} must be a non-negative number`);
    }
    // A retry's due time must stay a time PostgreSQL can store.
    if (key !== "factor" && value !== undefined && value > MAX_BACKOFF_MS) {
      throw new TypeError(`job ${definition.name}: backoff.${key} must be at most ${MAX_BACKOFF_MS} ms (365 days)`);
    }
  }
  return definition;
};

/** What `enqueue` takes for job `N`: its schema's input, less `undefined` and `null` (a payload is JSON other than null). */
export type JobInput<J extends AnyJob, N extends string> = Payload<input<Extract<J, { name: N }>["schema"]>>;
/** `{}` for a schema that takes anything (`z.unknown()`, `z.any()`): `Exclude` leaves `unknown` as it is. */
type Payload<T> = unknown extends T ? {} : Exclude<T, undefined | null>;
type Fn = (...args: never[]) => unknown;
/**
 * A value as the recorded output brings it back: what `toJSON` returns for a Date (a string), a bigint as
 * its digits (a string), a Map or Set as JSON writes them (an empty object), an Error as its own enumerable
 * properties (`{}` for most: message and stack are not), an interface's or a class's object without its
 * methods and symbol keys, recursively.
 */
export type JsonForm<T> = T extends { toJSON(): infer R }
  ? JsonForm<R>
  : T extends bigint ? string
  : T extends ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> ? Record<string, never>
  : T extends Error ? Record<string, unknown>
  : T extends readonly unknown[] ? { [K in keyof T]: JsonItem<T[K]> }
  : T extends Fn ? undefined
  : T extends object ? { [K in keyof T as K extends symbol ? never : T[K] extends Fn ? never : K]: JsonForm<T[K]> }
  : T;
/** An array's element: JSON writes `undefined`, a function or a symbol there as `null` (a property holding one is left out). */
type JsonItem<T> = T extends undefined | Fn | symbol ? null : JsonForm<T>;
/** The whole output: one that is `undefined` (a handler that returned nothing) comes back `null`. */
type JsonResult<T> = undefined extends T ? JsonForm<Exclude<T, undefined>> | null : JsonForm<T>;
/** One job's recorded output: its `output` schema's type as JSON brings it back, or `unknown` without one. */
type OutputOf<J> = J extends { readonly output?: infer O }
  ? [NonNullable<O>] extends [never] ? unknown : NonNullable<O> extends $ZodType ? JsonResult<output<NonNullable<O>>> : unknown
  : unknown;
/**
 * What a finished run of job `N` recorded. For several names (an id whose job is not known), the
 * union of theirs: `unknown` as soon as one of them declares no output.
 */
export type JobOutput<J extends AnyJob, N extends string> = OutputOf<Extract<J, { name: N }>>;

export const registryOf = (jobs: readonly AnyJob[]): ReadonlyMap<string, AnyJob> => {
  const map = new Map<string, AnyJob>();
  for (const job of jobs) {
    if (map.has(job.name)) throw new JobsError("invalid_config", `job ${JSON.stringify(job.name)} is defined twice`, { job: job.name });
    map.set(job.name, job);
  }
  return map;
};

/** `ctx.log`: the handler's fields with the run's own (which they never overwrite); a field whose getter throws is dropped. */
export const jobLogger = (logger: Logger, base: Record<string, unknown>): JobContext["log"] => (given, msg, fields) => {
  const level = logLevel(given);
  const kept: Array<[string, unknown]> = [];
  let dropped = false;
  try {
    // Field by field: one getter that throws costs only its own field. (A proxy whose keys throw, all of them.)
    const given: Record<string, unknown> = fields ?? {};
    for (const key of Object.keys(given)) {
      try {
        kept.push([key, given[key]]);
      } catch {
        dropped = true;
      }
    }
  } catch {
    dropped = true;
  }
  logger.log(level, msg, { ...Object.fromEntries(kept), ...base, ...(dropped ? { fieldsDropped: true } : {}) });
};

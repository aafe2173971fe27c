// A small typed client for the HTTP API. Besides the route table (plain data), its imports are
// types only: bundling it pulls in no server code, no zod and no driver; payload types come from
// the job definitions. Its calls have the names and results of the library's own (`jobs.get`, ...).
import type { EnqueueOptions, EnqueueResult } from "../enqueue.js";
import type { ApiErrorCode } from "../http/api-errors.js";
import type { AnyJob, JobInput, JobOutput } from "../job.js";
import type { ListRunsQuery } from "../store/runs/runs-list.js";
import type { RunSummary, RunView } from "../store/runs/run-views.js";
import { unsendableItem, unsendablePayload } from "./sendable.js";
import { waitForResult, type WaitOptions } from "./wait.js";
import type { EnqueueItemFor, OnePayload, TypedEnqueueItem } from "../jobs.js";
import type { ListSchedulesQuery, ScheduleInfo } from "../schedules/index.js";
import type { DeadLetterSummary, DeadLetterView, JobSummary, JobView } from "../store/admin/views.js";
import type { Page } from "../store/shared/paging.js";
import type { BulkReplayResult } from "../store/admin/replay-bulk.js";
import type { Stats } from "../store/admin/stats.js";
import { pathOf, ROUTES, type RouteName } from "../http/route-table.js";

export interface ClientOptions {
  /** Where the app is mounted, e.g. "https://example.com" (routes are under /api). */
  readonly baseUrl: string;
  /** One of the server's JOBS_API_TOKEN values. */
  readonly token: string;
  /** A fetch implementation; default the global one. */
  readonly fetch?: ((input: Request) => Promise<Response>) | undefined;
}

/** An error answer of the API: its status, stable code, message and details (e.g. `index`, `issues`). */
export class JobsApiError extends Error {
  override readonly name = "JobsApiError";
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

type Names<J extends readonly AnyJob[]> = J[number]["name"];

/** A job id that remembers which job it is, so `waitForResult` can type the output. */
export type JobId<N extends string = string> = string & { readonly __job?: N };

/** What an enqueue answers, its id typed by the job. */
export type Enqueued<N extends string> = Omit<EnqueueResult, "id"> & { readonly id: JobId<N> };

export interface ListJobsParams<J extends readonly AnyJob[]> {
  readonly job?: Names<J> | undefined;
  readonly status?: "queued" | "running" | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

export interface JobsClient<J extends readonly AnyJob[]> {
  /** Enqueues one job; the payload is type-checked against the job's schema here and validated again by the server. */
  enqueue<N extends Names<J>>(job: N, payload: OnePayload<J[number], N>, options?: EnqueueOptions): Promise<Enqueued<N>>;
  /** Enqueues a batch in one statement; nothing is stored if one item is bad (the error's details name its index). */
  enqueueMany<const N extends readonly Names<J>[]>(items: { readonly [K in keyof N]: EnqueueItemFor<J[number], N[K] & string> }): Promise<EnqueueResult[]>;
  enqueueMany(items: ReadonlyArray<TypedEnqueueItem<J[number]>>): Promise<EnqueueResult[]>;
  /** A job (queued, running, dead, or succeeded with its output and attempts), or null when neither the queue nor the history has it. */
  get(id: string): Promise<JobView | null>;
  /** A page of queued and running jobs; each row has a preview of its payload (`payloadPreview`, `payloadBytes`), `get` the payload. */
  list(params?: ListJobsParams<J>): Promise<Page<JobSummary>>;
  /** Cancels a queued job; `JobsApiError` with code `conflict` when it is running, `not_found` when it is gone. */
  cancel(id: string): Promise<{ id: string; cancelled: true }>;
  /**
   * Waits until the job succeeded and returns its output, typed by the job's `output` schema
   * when the id came from this client's `enqueue`. Rejects with `JobsWaitError`: `dead` (it
   * became a dead letter), `not_found`, or `timeout` (default 30 s).
   */
  waitForResult<N extends Names<J>>(id: JobId<N>, options?: WaitOptions): Promise<JobOutput<J[number], N>>;
  readonly runs: {
    /** The run history, newest first; rows without output, stack and logs (`get` has them). */
    list(params?: Omit<ListRunsQuery, "job"> & { job?: Names<J> | undefined }): Promise<Page<RunSummary>>;
    get(id: string): Promise<RunView | null>;
    /** A new job with the run's job, payload and correlation id; with an `idempotencyKey`, a repeat (a retried request) returns the same job. */
    rerun(id: string, options?: { idempotencyKey?: string | undefined }): Promise<{ id: string; runId: string; deduplicated: boolean }>;
  };
  /** Makes a queued job due now; `moved: false` when it was due already. `conflict` while it runs. */
  run(id: string): Promise<{ id: string; runAt: string; moved: boolean }>;
  readonly deadLetters: {
    /** A page of dead letters; each row has a preview of its payload, `get` the payload. */
    list(params?: { job?: Names<J> | undefined; reason?: string | undefined; limit?: number | undefined; cursor?: string | undefined }): Promise<Page<DeadLetterSummary>>;
    get(id: string): Promise<DeadLetterView | null>;
    /**
     * Queues it again (same id, attempt 0); with `payload`, an edited payload the server checks against the job's schema;
     * with `replays`, only the letter replayed that many times (as you saw it): a retry of the same request is 404.
     */
    replay(id: string, options?: { payload?: unknown; replays?: number | undefined }): Promise<{ id: string; replayed: true }>;
    replayMany(selector: { ids: readonly string[] } | { job?: Names<J> | undefined; reason?: string | undefined; limit?: number | undefined; cursor?: string | undefined }): Promise<BulkReplayResult>;
    discard(id: string): Promise<{ id: string; discarded: true }>;
    discardMany(ids: readonly string[]): Promise<{ discarded: string[]; missing: string[] }>;
  };
  readonly schedules: {
    list(params?: ListSchedulesQuery): Promise<Page<ScheduleInfo>>;
    pause(name: string): Promise<ScheduleInfo>;
    resume(name: string): Promise<ScheduleInfo>;
    /** One job of the schedule at once; with an `idempotencyKey`, a repeat (a retried request) while it is queued or running returns it. */
    run(name: string, options?: { idempotencyKey?: string | undefined }): Promise<{ id: string; deduplicated: boolean }>;
  };
  stats(): Promise<Stats>;
  health(): Promise<{ ok: boolean; lastTickAt: string | null }>;
}

/** The routes the client calls (the tick takes CRON_SECRET, the OpenAPI document is for tools). */
export type ClientRoute = Exclude<RouteName, "tick" | "tick.get" | "openapi">;

/** A request body as JSON; one JSON cannot write (a circular object) is refused as the library refuses such a payload. */
const jsonBody = (body: unknown): string => {
  try {
    return JSON.stringify(body);
  } catch (e) {
    throw new JobsApiError(422, "invalid_payload", `the request cannot be sent as JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
};

const isEnqueued = (v: unknown): boolean => typeof (v as { id?: unknown } | undefined)?.id === "string";

const query = (params: Record<string, string | number | undefined> = {}) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
};

/**
 * `createClient<typeof jobList>({ baseUrl, token })`, where `jobList` is the
 * array of `defineJob` results the server passes to `createJobs`: enqueue
 * names and payloads are then checked by the compiler.
 */
export const createClient = <J extends readonly AnyJob[]>(options: ClientOptions): JobsClient<J> => {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? ((req: Request) => fetch(req));

  /** Calls a route of the table: its method and path, parameters filled in, the query string and a JSON body. */
  const call = async <T>(
    route: ClientRoute,
    args: {
      params?: Record<string, string>;
      query?: Record<string, string | number | undefined>;
      body?: unknown;
      signal?: AbortSignal;
      /** What a success must look like (a write's answer is checked: an answer from elsewhere must not pass for it). */
      expect?: (body: unknown) => boolean;
    } = {},
  ): Promise<T> => {
    const { method } = ROUTES[route];
    // URLs drop "." and ".." segments and an empty one would leave the path's parent: such a value
    // would call another route (get("") the job list), as would one that spells another route's path
    // (deadLetters.get("replay"): a 405). None names anything.
    const path = pathOf(route, args.params);
    for (const [key, value] of Object.entries(args.params ?? {})) {
      if (value === "" || value === "." || value === ".." || Object.values(ROUTES).some((r) => r.path === path)) {
        throw new JobsApiError(404, "not_found", `no ${route.split(".")[0]} with ${key} ${JSON.stringify(value)}`);
      }
    }
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: "application/json" };
    if (args.body !== undefined) headers["content-type"] = "application/json";
    const url = `${base}${path}${query(args.query)}`;
    const body = args.body === undefined ? undefined : jsonBody(args.body);
    // Never followed: fetch turns a POST into a GET on a 301 or 302, and the write would land on a read.
    const res = await doFetch(new Request(url, { method, headers, body, redirect: "manual", ...(args.signal ? { signal: args.signal } : {}) }));
    if ((res.status >= 300 && res.status < 400) || res.type === "opaqueredirect") {
      const to = res.headers.get("location");
      throw new JobsApiError(res.status, "no_route", `the server redirected ${method} ${url}${to ? ` to ${to}` : ""}; the client follows no redirect: set baseUrl to the address the API answers at`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new JobsApiError(res.status, "internal", `the server answered ${res.status} with a body that is not JSON`);
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code?: ApiErrorCode; message?: string; details?: unknown } } | undefined)?.error;
      throw new JobsApiError(res.status, e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.details);
    }
    if (args.expect && !args.expect(parsed)) {
      throw new JobsApiError(res.status, "internal", `the server answered ${res.status} with a body that is not what ${route} answers: is baseUrl the API's address?`);
    }
    return parsed as T;
  };
  const orNull = <T>(p: Promise<T>): Promise<T | null> =>
    p.catch((e: unknown) => {
      if (e instanceof JobsApiError && e.code === "not_found") return null;
      throw e;
    });
  const id = (value: string) => ({ params: { id: value } });
  const name = (value: string) => ({ params: { name: value } });

  /** An enqueue body, refused here as the server would refuse it when JSON cannot carry a value as given. */
  const enqueueBody = <B>(body: B, items: readonly object[], batch: boolean): B => {
    // What is not a list of objects is sent as it is: the server says what is wrong with it, and where.
    if (!Array.isArray(items)) return body;
    for (const [index, item] of items.entries()) {
      if (typeof item !== "object" || item === null) continue;
      const bad = unsendableItem(item, batch ? { index } : {});
      if (bad) throw new JobsApiError(422, bad.code, bad.message, bad.details);
    }
    return body;
  };

  return {
    enqueue: async (job, payload, opts = {}) => {
      const item = { ...opts, job, payload };
      return call("enqueue", { body: enqueueBody(item, [item], false), expect: isEnqueued });
    },
    async enqueueMany(items: readonly object[]) {
      const body = enqueueBody(items, items, true);
      // One answer per item sent: a page of the job list has an items array too.
      const expect = (v: unknown) => {
        const answers = (v as { items?: unknown } | undefined)?.items;
        return Array.isArray(answers) && answers.length === items.length && answers.every(isEnqueued);
      };
      return (await call<{ items: EnqueueResult[] }>("enqueue", { body, expect })).items;
    },
    get: (jobId) => orNull(call<JobView>("get", id(jobId))),
    list: (params = {}) => call("list", { query: { ...params } }),
    cancel: (jobId) => call("cancel", id(jobId)),
    run: (jobId) => call("run", id(jobId)),
    waitForResult: <N extends Names<J>>(jobId: JobId<N>, opts?: WaitOptions) =>
      waitForResult((j, signal) => orNull(call<JobView>("get", { ...id(j), signal })), jobId, opts) as Promise<JobOutput<J[number], N>>,
    runs: {
      list: (params = {}) => call("runs.list", { query: { ...params } }),
      get: (runId) => orNull(call<RunView>("runs.get", id(runId))),
      rerun: (runId, options) => call("runs.rerun", { ...id(runId), ...(options?.idempotencyKey !== undefined ? { body: { idempotencyKey: options.idempotencyKey } } : {}) }),
    },
    deadLetters: {
      list: (params = {}) => call("deadLetters.list", { query: { ...params } }),
      get: (deadId) => orNull(call<DeadLetterView>("deadLetters.get", id(deadId))),
      replay: async (deadId, edit) => {
        // JSON would drop an undefined payload, and the server would replay the original one.
        if (edit !== undefined && "payload" in edit && edit.payload === undefined) {
          throw new JobsApiError(422, "invalid_payload", "the edited payload is missing (leave it out to replay the original payload)");
        }
        const bad = edit && "payload" in edit ? unsendablePayload(edit.payload, "the edited payload") : undefined;
        if (bad) throw new JobsApiError(422, bad.code, bad.message, bad.details);
        return call("deadLetters.replay", { ...id(deadId), body: edit });
      },
      replayMany: (selector) => call("deadLetters.replayMany", { body: selector }),
      discard: (deadId) => call("deadLetters.discard", id(deadId)),
      discardMany: (ids) => call("deadLetters.discardMany", { body: { ids } }),
    },
    schedules: {
      list: (params = {}) => call("schedules.list", { query: { ...params } }),
      pause: (schedule) => call("schedules.pause", name(schedule)),
      resume: (schedule) => call("schedules.resume", name(schedule)),
      run: (schedule, options) => call("schedules.run", { ...name(schedule), ...(options?.idempotencyKey !== undefined ? { body: { idempotencyKey: options.idempotencyKey } } : {}) }),
    },
    stats: () => call("stats"),
    health: () => call("health"),
  };
};

// A small typed client for the HTTP API. Type-only imports: bundling it pulls in
// no server code, no zod and no driver; payload types come from the job definitions.
import type { EnqueueOptions, EnqueueResult } from "../enqueue.js";
import type { ApiErrorCode } from "../http/api-errors.js";
import type { AnyJob, JobInput } from "../job.js";
import type { TypedEnqueueItem } from "../jobs.js";
import type { ScheduleInfo } from "../schedules/index.js";
import type { DeadLetterSummary, DeadLetterView, JobSummary, JobView } from "../store/admin/views.js";
import type { Page } from "../store/shared/paging.js";
import type { BulkReplayResult } from "../store/admin/replay-bulk.js";
import type { Stats } from "../store/admin/stats.js";

export interface ClientOptions {
  /** Where the app is mounted, e.g. "https://example.com" (routes are under /api). */
  readonly baseUrl: string;
  /** One of the server's JOBS_API_TOKEN values. */
  readonly token: string;
  /** A fetch implementation; default the global one. */
  readonly fetch?: (input: Request) => Promise<Response>;
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

export interface ListJobsParams<J extends readonly AnyJob[]> {
  readonly job?: Names<J>;
  readonly status?: "queued" | "running";
  readonly limit?: number;
  readonly cursor?: string;
}

export interface JobsClient<J extends readonly AnyJob[]> {
  /** Enqueues one job; the payload is type-checked against the job's schema here and validated again by the server. */
  enqueue<N extends Names<J>>(job: N, payload: JobInput<J[number], N>, options?: EnqueueOptions): Promise<EnqueueResult>;
  /** Enqueues a batch in one statement; nothing is stored if one item is bad (the error's details name its index). */
  enqueueMany(items: ReadonlyArray<TypedEnqueueItem<J[number]>>): Promise<EnqueueResult[]>;
  /** A job, or null when it is not queued, running or dead (finished jobs leave the queue). */
  getJob(id: string): Promise<JobView | null>;
  /** A page of queued and running jobs; each row has a preview of its payload (`payloadPreview`, `payloadBytes`), `getJob` the payload. */
  listJobs(params?: ListJobsParams<J>): Promise<Page<JobSummary>>;
  /** Cancels a queued job; `JobsApiError` with code `conflict` when it is running, `not_found` when it is gone. */
  cancelJob(id: string): Promise<void>;
  readonly deadLetters: {
    /** A page of dead letters; each row has a preview of its payload, `get` the payload. */
    list(params?: { job?: Names<J>; reason?: string; limit?: number; cursor?: string }): Promise<Page<DeadLetterSummary>>;
    get(id: string): Promise<DeadLetterView | null>;
    /** Queues it again (same id, attempt 0); with `payload`, an edited payload the server checks against the job's schema. */
    replay(id: string, edit?: { payload: unknown }): Promise<{ id: string }>;
    replayMany(selector: { ids: readonly string[] } | { job: Names<J>; limit?: number }): Promise<BulkReplayResult>;
    discard(id: string): Promise<void>;
  };
  readonly schedules: {
    list(params?: { next?: number }): Promise<ScheduleInfo[]>;
    pause(name: string): Promise<ScheduleInfo>;
    resume(name: string): Promise<ScheduleInfo>;
    run(name: string): Promise<{ id: string }>;
  };
  stats(): Promise<Stats>;
  health(): Promise<{ ok: boolean; lastTickAt: string | null }>;
}

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

  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await doFetch(new Request(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
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
    return parsed as T;
  };
  const orNull = <T>(p: Promise<T>): Promise<T | null> =>
    p.catch((e: unknown) => {
      if (e instanceof JobsApiError && e.code === "not_found") return null;
      throw e;
    });
  const seg = encodeURIComponent;

  return {
    async enqueue(job, payload, opts = {}) {
      return call<EnqueueResult>("POST", "/api/jobs", { ...opts, job, payload });
    },
    async enqueueMany(items) {
      return (await call<{ items: EnqueueResult[] }>("POST", "/api/jobs", items)).items;
    },
    getJob: (id) => orNull(call<JobView>("GET", `/api/jobs/${seg(id)}`)),
    listJobs: (params = {}) => call("GET", `/api/jobs${query({ ...params })}`),
    async cancelJob(id) {
      await call("DELETE", `/api/jobs/${seg(id)}`);
    },
    deadLetters: {
      list: (params = {}) => call("GET", `/api/dead-letters${query({ ...params })}`),
      get: (id) => orNull(call<DeadLetterView>("GET", `/api/dead-letters/${seg(id)}`)),
      async replay(id, edit) {
        const r = await call<{ id: string }>("POST", `/api/dead-letters/${seg(id)}/replay`, edit);
        return { id: r.id };
      },
      replayMany: (selector) => call("POST", "/api/dead-letters/replay", selector),
      async discard(id) {
        await call("DELETE", `/api/dead-letters/${seg(id)}`);
      },
    },
    schedules: {
      async list(params = {}) {
        return (await call<{ items: ScheduleInfo[] }>("GET", `/api/schedules${query({ ...params })}`)).items;
      },
      pause: (name) => call("POST", `/api/schedules/${seg(name)}/pause`),
      resume: (name) => call("POST", `/api/schedules/${seg(name)}/resume`),
      run: (name) => call("POST", `/api/schedules/${seg(name)}/run`),
    },
    stats: () => call("GET", "/api/stats"),
    health: () => call("GET", "/api/health"),
  };
};

// The part of the peers' APIs the benchmark uses, declared here so that the main
// typecheck does not need them installed (`npm run bench` installs them on first use).
// bench-smoke runs every call below against the real packages.
import type PgModule from "pg";

export declare const pg: typeof PgModule;

// graphile-worker 0.18
export declare class Logger {
  constructor(factory: (scope: unknown) => (level: string, message: string, meta?: unknown) => void);
}
interface GraphileOptions {
  readonly connectionString: string;
  readonly logger: Logger;
}
export interface WorkerUtils {
  addJobs(specs: ReadonlyArray<{ identifier: string; payload: unknown }>): Promise<unknown>;
  withPgClient<T>(fn: (client: PgModule.PoolClient) => Promise<T>): Promise<T>;
  release(): Promise<void>;
}
export declare function runMigrations(options: GraphileOptions): Promise<void>;
export declare function makeWorkerUtils(options: GraphileOptions): Promise<WorkerUtils>;
export declare function run(
  options: GraphileOptions & {
    readonly concurrency: number;
    readonly noHandleSignals: boolean;
    readonly taskList: Record<string, (payload: unknown) => Promise<void>>;
    readonly preset: {
      readonly worker: { readonly maxPoolSize: number; readonly localQueue: { readonly size: number }; readonly completeJobBatchDelay: number; readonly failJobBatchDelay: number };
    };
  },
): Promise<{ stop(): Promise<void> }>;

// pg-boss 12
export declare class PgBoss {
  constructor(options: { connectionString: string; schema: string; supervise: boolean; schedule: boolean; registerInstance: boolean });
  on(event: "error", listener: (error: Error) => void): this;
  start(): Promise<this>;
  createQueue(name: string): Promise<void>;
  getDb(): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };
  insert(name: string, jobs: ReadonlyArray<{ data: unknown }>): Promise<unknown>;
  work<T>(
    name: string,
    options: { batchSize: number; localConcurrency: number; burstWhenBatchFull: boolean; pollingIntervalSeconds: number },
    handler: (jobs: Array<{ data: T }>) => Promise<void>,
  ): Promise<string>;
  offWork(name: string, options?: { wait?: boolean }): Promise<void>;
  deleteAllJobs(name?: string): Promise<void>;
  stop(options?: { graceful?: boolean; close?: boolean }): Promise<void>;
}

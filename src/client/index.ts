// `pgtick/client`: the typed HTTP client. No server code, driver or zod in it.
export { createClient, JobsApiError, type ClientOptions, type ClientRoute, type Enqueued, type JobId, type JobsClient, type ListJobsParams } from "./client.js";
export { JobsWaitError, type WaitOptions } from "./wait.js";
export type { ApiErrorCode } from "../http/api-errors.js";

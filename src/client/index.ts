// `pgtick/client`: the typed HTTP client. No server code, driver or zod in it.
export { createClient, JobsApiError, type ClientOptions, type ClientRoute, type JobsClient, type ListJobsParams } from "./client.js";

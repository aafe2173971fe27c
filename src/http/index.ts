// `pgtick/http`: the HTTP API and the dashboard as one Hono app (web-standard Request/Response).
import type { AnyJob } from "../job.js";
import { type AppOptions, createApp as createAppWith } from "./api-app.js";
import { zodPayloadSchemas } from "./payload-schemas.js";
import { openApiDocument } from "./openapi.js";

export type { AppOptions } from "./api-app.js";
export { opaquePayloadSchemas, type OpenApiDocument, type PayloadSchemas, zodPayloadSchemas } from "./payload-schemas.js";

/** The HTTP API as a Hono app; it serves its OpenAPI document, describing each job's payload with zod's JSON Schema, unless told otherwise. */
export const createApp = <J extends readonly AnyJob[] = readonly AnyJob[]>(options: AppOptions<J>): ReturnType<typeof createAppWith> =>
  // Given as undefined, as left out: the defaults.
  createAppWith({ ...options, payloadSchemas: options.payloadSchemas ?? zodPayloadSchemas, openApi: options.openApi ?? openApiDocument });
export { createDashboard, type DashboardEnv, type DashboardOptions } from "../dashboard/dashboard-app.js";
export type { TickRequest } from "./tick-request.js";
export { STATUS as API_ERROR_STATUS, type ApiErrorBody, type ApiErrorCode } from "./api-errors.js";
export { ROUTES, type RouteName, type RouteSpec } from "./route-table.js";
export { openApiDocument };

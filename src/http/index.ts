// `pgtick/http`: the HTTP API and the dashboard as one Hono app (web-standard Request/Response).
export { createApp, type AppOptions } from "./api-app.js";
export { createDashboard, type DashboardOptions } from "../dashboard/dashboard-app.js";
export { STATUS as API_ERROR_STATUS, type ApiErrorBody, type ApiErrorCode } from "./api-errors.js";
export { ROUTES, type RouteName, type RouteSpec } from "./route-table.js";
export { openApiDocument } from "./openapi.js";

import { errorText } from "../error-text.js";
import type { Context } from "hono";
import type { AnyJobs } from "../jobs.js";
import type { Logger } from "../log.js";
import type { TickOptions, TickReport } from "../tick/types.js";
import type { TickRequest } from "./tick-request.js";
import type { Secrets } from "./auth.js";

import type { RouteName } from "./route-table.js";
import type { OpenApiDocument, PayloadSchemas } from "./payload-schemas.js";

export type { AnyJobs } from "../jobs.js";

/** What every route needs, fixed when the app is created. */
export interface ApiConfig {
  readonly maxBodyBytes: number;
  readonly apiTokens: Secrets;
  readonly cronSecret: Secrets;
  readonly logger: Logger;
  readonly onEnqueued?: (info: { ids: string[]; dueNow: boolean }, c: Context) => void | Promise<void>;
  readonly tickOptions?: TickOptions | ((c: Context) => TickOptions | Promise<TickOptions>);
  readonly tick?: (req: TickRequest, c: Context) => Promise<TickReport>;
  readonly background?: (work: Promise<unknown>, c: Context) => void;
  readonly payloadSchemas?: PayloadSchemas;
  readonly openApi?: OpenApiDocument;
}

export interface ApiEnv {
  Variables: {
    /** The jobs instance for this request; created on first use (a per-request factory opens its pool only then). */
    jobs: () => Promise<AnyJobs>;
    /** Work this request leaves running after its response (a tick answered 202): a per-request jobs instance is disposed only after it. */
    outlive: (work: Promise<unknown>) => void;
  };
}

/** Runs the `onEnqueued` hook; the jobs are stored already, so a failing hook is logged, not answered with an error. */
export const notifyEnqueued = async (config: ApiConfig, c: Context, ids: string[], dueNow: boolean): Promise<void> => {
  if (!config.onEnqueued || ids.length === 0) return;
  try {
    await config.onEnqueued({ ids, dueNow }, c);
  } catch (e) {
    // Read safely: a thrown value whose message getter throws failed the request (a 500 for jobs already stored).
    config.logger.log("error", "onEnqueued hook failed", { error: errorText(e), ids });
  }
};

/** What answers one route of the table; errors thrown are answered in the API's one error shape. */
export type Handler = (c: Context<ApiEnv>, config: ApiConfig) => Promise<Response>;
export type Handlers<N extends RouteName = RouteName> = { readonly [K in N]: Handler };

/** The query string of the route, checked against the parameters its table entry names. */
export const jobsOf = (c: Context<ApiEnv>): Promise<AnyJobs> => c.get("jobs")();

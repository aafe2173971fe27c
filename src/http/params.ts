import type { Context } from "hono";
import { JobsError } from "../errors.js";
import { ROUTES, type RouteName } from "./route-table.js";

type QueryOf<N extends RouteName> = (typeof ROUTES)[N] extends { readonly query: readonly (infer K)[] } ? K & string : never;

/**
 * The query string as single values, refusing names the route does not know
 * (a misspelt filter would otherwise silently list everything) and repeats.
 */
export const queryParams = <N extends RouteName, K extends string = QueryOf<N>>(c: Context, route: N): Partial<Record<K, string>> => {
  const spec = ROUTES[route] as { readonly query?: readonly string[] };
  const allowed = (spec.query ?? []) as readonly K[];
  const all = c.req.queries();
  const out: Partial<Record<K, string>> = {};
  for (const [name, values] of Object.entries(all)) {
    if (!(allowed as readonly string[]).includes(name)) {
      throw new JobsError("invalid_options", `unknown query parameter ${JSON.stringify(name)}; this route takes ${allowed.join(", ") || "none"}`, {
        field: name,
      });
    }
    if (values.length > 1) throw new JobsError("invalid_options", `give ${name} once`, { field: name });
    out[name as K] = values[0];
  }
  return out;
};

export const intParam = (value: string | undefined, field: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new JobsError("invalid_options", `${field} must be a whole number`, { field });
  return Number(value);
};

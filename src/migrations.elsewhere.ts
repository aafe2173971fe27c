// What a Cloudflare Worker bundles instead of the migrations (the `workerd` condition of
// `#migrations` in package.json): they run from Node before a deploy, never in a Worker, so
// their SQL stays out of the bundle.
import type { Migration } from "./migrate.js";

export const migrations: readonly Migration[] | null = null;

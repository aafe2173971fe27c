// What a Cloudflare Worker bundles instead of the migrations and their runner (the `workerd` condition of
// `#migrations` in package.json): they run from Node before a deploy, never in a Worker, so neither their
// SQL nor the runner is in the bundle.
import { JobsError } from "./errors.js";
import type { Migration } from "./migrate.js";

export const migrations: readonly Migration[] | null = null;

const notHere = () =>
  new JobsError("invalid_config", "migrations do not run inside a Cloudflare Worker: run `npm run migrate:deploy` (or `pgtick migrate`) from Node before deploying");

export const migrate = async (..._args: unknown[]): Promise<number[]> => {
  throw notHere();
};

export const migrationStatement = (..._args: unknown[]): string => {
  throw notHere();
};

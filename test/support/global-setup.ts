import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** One server for the whole run: DATABASE_URL when set, else an embedded PostgreSQL. */
export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide("databaseUrl", process.env.DATABASE_URL);
    return;
  }
  const pg = await startEmbeddedPostgres();
  project.provide("databaseUrl", pg.url);
  return () => pg.stop();
}

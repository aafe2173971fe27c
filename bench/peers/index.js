// The benchmark's peers, resolved from this folder's own node_modules (bench/peers.ts installs them).
// Their `pg` is a copy of its own, which the statement counter patches too.
export { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker";
export { PgBoss } from "pg-boss";
export { default as pg } from "pg";

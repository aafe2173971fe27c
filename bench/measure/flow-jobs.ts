// The no-op job with limits that never bind, for the flow-control sections: keys spread over
// FLOW_KEYS values, limits far above what a drain reaches.
import { defineJob } from "../../src/index.js";
import { NOOP_SCHEMA } from "../systems/ours.js";

export const FLOW_KEYS = 100;
export const CONCURRENCY_LIMIT = 1_000;
export const RATE_LIMIT = { limit: 1_000, periodMs: 1_000 } as const;

const keyOf = (p: { i: number }) => `k${p.i % FLOW_KEYS}`;

export const concurrencyLimited = defineJob({ name: "noop", schema: NOOP_SCHEMA, handler: () => {}, concurrency: { limit: CONCURRENCY_LIMIT, key: keyOf } });
export const rateLimited = defineJob({ name: "noop", schema: NOOP_SCHEMA, handler: () => {}, rateLimit: { ...RATE_LIMIT, key: keyOf } });

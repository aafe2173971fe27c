// Flow control under racing processes: five processes tick in a loop over keyed jobs; what every
// handler recorded in the database shows no key over its concurrency, no window over its rate,
// and a group's limit holding for two job types together.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("flow_race");
const child = fileURLToPath(new URL("./support/flow-child.ts", import.meta.url));

it("five racing processes keep every key within its concurrency and every window within its rate, groups shared", async () => {
  const schema = z.object({ tenant: z.string(), n: z.number() });
  const defs = [
    defineJob({ name: "per-tenant", schema, concurrency: { limit: 2, key: (p) => p.tenant }, handler: () => {} }),
    defineJob({ name: "rated", schema, rateLimit: { limit: 4, periodMs: 500, key: (p) => p.tenant }, handler: () => {} }),
    defineJob({ name: "mail-a", schema, rateLimit: { limit: 3, periodMs: 400, group: "provider" }, handler: () => {} }),
    defineJob({ name: "mail-b", schema, rateLimit: { limit: 3, periodMs: 400, group: "provider" }, handler: () => {} }),
  ] as const;
  const jobs = await h.isolated(defs);
  const prefix = jobs.settings.tablePrefix;
  await h.db.query(`CREATE TABLE flow_runs (id serial PRIMARY KEY, job_id uuid NOT NULL, job text NOT NULL, tenant text NOT NULL,
    started timestamptz NOT NULL, claimed timestamptz NOT NULL, finished timestamptz)`);
  const tenants = ["t1", "t2", "t3"];
  await jobs.enqueueMany([
    ...Array.from({ length: 60 }, (_, n) => ({ job: "per-tenant" as const, payload: { tenant: tenants[n % 3]!, n } })),
    ...Array.from({ length: 24 }, (_, n) => ({ job: "rated" as const, payload: { tenant: tenants[n % 2]!, n } })),
    ...Array.from({ length: 9 }, (_, n) => ({ job: "mail-a" as const, payload: { tenant: "-", n } })),
    ...Array.from({ length: 9 }, (_, n) => ({ job: "mail-b" as const, payload: { tenant: "-", n } })),
  ]);
  await Promise.all(Array.from({ length: 5 }, () =>
    new Promise<void>((resolve, reject) => {
      const p = spawn(process.execPath, ["--import", "tsx", child, h.url, prefix, "5"], { stdio: ["ignore", "inherit", "inherit"] });
      p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
    })));

  expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}queue`)).toEqual([{ n: 0 }]);
  // Every job ran (a run cut short by a tick's deadline runs again: at least once).
  expect(await h.rows(`SELECT count(DISTINCT job_id)::int AS n FROM flow_runs`)).toEqual([{ n: 102 }]);
  // Concurrency: at each start, the runs of that key already going (started before, not finished).
  const [busiest] = await h.rows<{ n: number }>(`
    SELECT max((SELECT count(*) FROM flow_runs o WHERE o.job = r.job AND o.tenant = r.tenant
                AND o.started <= r.started AND o.finished > r.started))::int AS n
    FROM flow_runs r WHERE r.job = 'per-tenant'`);
  expect(busiest!.n).toBe(2);
  // Rate: every window of the period that opens at a start (the claim) holds at most the limit.
  const [rated] = await h.rows<{ n: number }>(`
    SELECT max((SELECT count(*) FROM flow_runs o WHERE o.job = 'rated' AND o.tenant = r.tenant
                AND o.claimed >= r.claimed AND o.claimed < r.claimed + interval '500 milliseconds'))::int AS n
    FROM flow_runs r WHERE r.job = 'rated'`);
  expect(rated!.n).toBeLessThanOrEqual(4);
  const [group] = await h.rows<{ n: number }>(`
    SELECT max((SELECT count(*) FROM flow_runs o WHERE o.job IN ('mail-a', 'mail-b')
                AND o.claimed >= r.claimed AND o.claimed < r.claimed + interval '400 milliseconds'))::int AS n
    FROM flow_runs r WHERE r.job IN ('mail-a', 'mail-b')`);
  expect(group!.n).toBeLessThanOrEqual(3);
  // Every rate window's starts in order (the admission finds a window by binary search in them).
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}flow WHERE starts <> ARRAY(SELECT s FROM unnest(starts) s ORDER BY s)`)).toEqual([{ n: 0 }]);
  // Nothing left counted as running.
  expect(await h.rows(`SELECT coalesce(sum(running), 0)::int AS n FROM ${prefix}flow`)).toEqual([{ n: 0 }]);
}, 60_000);

// Behind a transaction pooler that cannot keep named statements (PgBouncer before 1.21), a connection's
// prepared statements vanish or clash between statements: the server answers 26000 or 42P05 before it
// runs anything. The driver then sends its statements unprepared, instead of failing every tick.
import pg from "pg";
import { expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, memoryLogger } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("prepared_fallback");

it("a tick whose prepared statements were dropped on the server (26000) sends them unprepared and drains", async () => {
  const noop = defineJob({ name: "noop", schema: z.object({ n: z.number() }), handler: () => {} });
  const setup = await h.isolated([noop]);
  const client = new pg.Client({ connectionString: h.url });
  await client.connect();
  try {
    const jobs = createJobs({ db: client, jobs: [noop], logger: memoryLogger(), settings: { tablePrefix: setup.settings.tablePrefix } });
    await jobs.enqueueMany([1, 2, 3].map((n) => ({ job: "noop" as const, payload: { n } })));
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 3 });
    // What a pooler does when it hands the next statement another server connection: the names are gone.
    await client.query("DEALLOCATE ALL");
    await jobs.enqueueMany([4, 5, 6].map((n) => ({ job: "noop" as const, payload: { n } })));
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 3 });
    // From then on unnamed: the connection holds none of them.
    const { rows } = await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'pgtick_%'");
    expect(rows).toEqual([]);
  } finally {
    await client.end();
  }
});

it("a tick whose statement names another client holds on the connection (42P05) sends them unprepared and drains", async () => {
  const noop = defineJob({ name: "noop", schema: z.object({ n: z.number() }), handler: () => {} });
  const setup = await h.isolated([noop]);
  const first = new pg.Client({ connectionString: h.url });
  const second = new pg.Client({ connectionString: h.url });
  await Promise.all([first.connect(), second.connect()]);
  try {
    const settings = { tablePrefix: setup.settings.tablePrefix };
    await setup.enqueueMany([1, 2].map((n) => ({ job: "noop" as const, payload: { n } })));
    expect(await createJobs({ db: first, jobs: [noop], logger: memoryLogger(), settings }).tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 2 });
    // The names the first connection prepared, already taken on the second (SQL-level PREPARE shares the namespace),
    // as a pooler handing the second client the first one's server connection would have them.
    const { rows } = await first.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'pgtick_%'");
    expect(rows.length).toBeGreaterThan(0);
    for (const { name } of rows) await second.query(`PREPARE ${name} AS SELECT 1`);
    await setup.enqueueMany([3, 4].map((n) => ({ job: "noop" as const, payload: { n } })));
    expect(await createJobs({ db: second, jobs: [noop], logger: memoryLogger(), settings }).tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 2 });
  } finally {
    await Promise.all([first.end(), second.end()]);
  }
});

// The operator CLI's admin commands against a real PostgreSQL: dead letters, runs, schedules
// and stats, their output, exit codes and error paths.
import { describe, expect, it } from "vitest";
import { clip, nextPage } from "../src/cli/output.js";
import { EXIT } from "../src/exit-codes.js";
import { cliFixture, expectOneLineError, json } from "./support/cli-fixture.js";

const { fresh, withoutModule } = await cliFixture("cli_admin");

/** Makes dead letters of sync-inventory (it always fails) with one attempt each. */
const deadLetters = async (cli: Awaited<ReturnType<typeof fresh>>["cli"], skus: string[], extra: string[] = []) => {
  const ids: string[] = [];
  for (const sku of skus) {
    const r = await cli(["enqueue", "sync-inventory", JSON.stringify({ sku }), "--max-attempts", "1", "--json", ...extra]);
    expect(r.code).toBe(0);
    ids.push(json<{ id: string }>(r).id);
  }
  const tick = await cli(["tick", "--json"]);
  expect(json<{ deadLettered: number }>(tick).deadLettered).toBe(skus.length);
  return ids;
};

describe("a preview clipped for a table", () => {
  it("never ends in half of a surrogate pair (it printed U+FFFD)", () => {
    const clipped = clip("ab🎉🎉🎉", 4);
    expect(clipped).toBe("ab…");
    expect(clip("abc🎉🎉", 6)).toBe("abc🎉…");
    expect(clip("abcdef", 4)).toBe("abc…");
    expect(clip("ab🎉", 4)).toBe("ab🎉");
  });
});

describe("dead-letters", () => {
  it("lists and shows dead letters, and says when one does not exist", async () => {
    const { cli } = await fresh();
    expect((await cli(["dead-letters", "list"])).stdout).toBe("no dead letters\n");
    const [a, b] = await deadLetters(cli, ["SKU-1", "SKU-2"]);
    const list = await cli(["dead-letters", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^id\s+job\s+reason\s+attempts\s+dead at\s+payload\s+last error$/);
    expect(list.stdout).toContain(a);
    // Each row shows the start of its payload; `show` prints it whole.
    expect(list.stdout).toMatch(new RegExp(`${b}\\s+sync-inventory\\s+exhausted\\s+1/1\\s+\\S+\\s+\\{"sku": "SKU-2"\\}`));
    const page = json<{ items: Array<{ id: string }>; nextCursor: string | null }>(await cli(["dead-letters", "list", "--limit", "1", "--json"]));
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ payloadPreview: expect.stringMatching(/^\{"sku": "SKU-[12]"\}$/), payloadBytes: 16, payloadTruncated: false });
    expect(page.items[0]).not.toHaveProperty("payload");
    expect(page.nextCursor).not.toBeNull();
    const next = json<{ items: Array<{ id: string }>; nextCursor: string | null }>(await cli(["dead-letters", "list", "--limit", "1", "--cursor", page.nextCursor!, "--json"]));
    expect([page.items[0]!.id, next.items[0]!.id].sort()).toEqual([a, b].sort());
    expect((await cli(["dead-letters", "list", "--job", "send-welcome", "--json"])).stdout).toContain('"items": []');
    // The next page's command keeps the filters and the limit: run as printed, it lists the next page.
    const first = await cli(["dead-letters", "list", "--job", "sync-inventory", "--limit", "1"]);
    const more = /^more: pgtick (.+)$/m.exec(first.stdout)![1]!;
    expect(more).toMatch(/^dead-letters list --job sync-inventory --limit 1 --cursor \S+$/);
    const second = await cli([...more.split(" "), "--json"]);
    const rest = json<{ items: Array<{ id: string }> }>(second).items.map((d) => d.id);
    expect(rest).toHaveLength(1);
    expect(first.stdout).not.toContain(rest[0]!);
    expect(nextPage("runs list", { job: "it's mine", limit: "2", json: false, cursor: "old" }, "C1")).toBe("more: pgtick runs list --job 'it'\\''s mine' --limit 2 --cursor C1");

    const show = await cli(["dead-letters", "show", a!]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`id:              ${a}`);
    expect(show.stdout).toContain("last error:      inventory service answered 503 for SKU-1");
    expect(show.stdout).toContain('"sku": "SKU-1"');
    expect(json(await cli(["dead-letters", "show", a!, "--json"]))).toMatchObject({ id: a, job: "sync-inventory", reason: "exhausted", payload: { sku: "SKU-1" } });

    expectOneLineError(await cli(["dead-letters", "show", "00000000-0000-4000-8000-000000000000"]), EXIT.notFound, /no dead letter with id 00000000-0000-4000-8000-000000000000/);
    expectOneLineError(await cli(["dead-letters", "show", "not-an-id"]), EXIT.notFound, /no dead letter with id not-an-id/);
    expectOneLineError(await cli(["dead-letters", "list", "--cursor", "garbage!"]), EXIT.rejected, /cursor is not one this API returned/);
  });

  it("prints what a job's caller sent inert: control characters in errors and payloads are escaped, never sent to the terminal", async () => {
    const { cli } = await fresh();
    // An error text carrying what was enqueued: clear the screen, retitle the terminal, forge a line.
    const sku = "\u001b]0;owned\u0007\u001b[2J\u009b31m\rfake line";
    const [id] = await deadLetters(cli, [sku]);
    for (const args of [["dead-letters", "list"], ["dead-letters", "show", id!], ["runs", "list"], ["dead-letters", "list", "--json"]]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout, args.join(" ")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
    expect((await cli(["dead-letters", "show", id!])).stdout).toContain("answered 503 for \\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u000dfake line");
    // --json stays JSON, and means the same.
    expect(json<{ items: Array<{ lastError: string }> }>(await cli(["dead-letters", "list", "--json"])).items[0]!.lastError).toContain(sku);
    // An id echoed back, as every command echoes one (discard wrote it raw).
    for (const args of [["dead-letters", "discard", sku], ["dead-letters", "show", sku], ["runs", "show", sku]]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(EXIT.notFound);
      expect(r.stderr, args.join(" ")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
  });

  it("replays one, with an edited payload, in bulk, and refuses conflicts", async () => {
    const { cli, rows } = await fresh();
    const [a, b, c, d] = await deadLetters(cli, ["SKU-1", "SKU-2", "SKU-3", "SKU-4"]);
    const one = await cli(["dead-letters", "replay", a!]);
    expect(one.code).toBe(0);
    expect(one.stdout).toBe(`replayed ${a}\n`);
    expect(await rows(`SELECT status, attempt FROM {p}queue WHERE id = $1`, [a])).toEqual([{ status: "queued", attempt: 0 }]);
    expectOneLineError(await cli(["dead-letters", "replay", a!]), EXIT.notFound, new RegExp(`no dead letter with id ${a}`));

    expectOneLineError(await cli(["dead-letters", "replay", b!, "--payload", '{"sku":7}']), EXIT.rejected, /payload for sync-inventory does not match its schema: sku: /);
    expectOneLineError(await cli(["dead-letters", "replay", b!, "--payload", "{sku"]), EXIT.usage, /--payload is not valid JSON/);
    expectOneLineError(await cli(["dead-letters", "replay", b!, "--payload", '{"sku":"a","n":-98765432109876543}']), EXIT.rejected, /--payload: the number -98765432109876543 cannot be held exactly/);
    expect(await rows(`SELECT 1 FROM {p}dead_letters WHERE id = $1`, [b])).toHaveLength(1);
    const edited = await cli(["dead-letters", "replay", b!, "--payload", '{"sku":"SKU-2b"}']);
    expect(edited.stdout).toBe(`replayed ${b} with the edited payload\n`);
    expect(await rows(`SELECT payload FROM {p}queue WHERE id = $1`, [b])).toEqual([{ payload: { sku: "SKU-2b" } }]);

    const bulk = await cli(["dead-letters", "replay", c!, "00000000-0000-4000-8000-000000000000", "--json"]);
    expect(bulk.code).toBe(EXIT.notFound);
    expect(json(bulk)).toEqual({ replayed: [c], skipped: [{ id: "00000000-0000-4000-8000-000000000000", reason: "not_found" }], remaining: 0, nextCursor: null });
    const byJob = await cli(["dead-letters", "replay", "--job", "sync-inventory"]);
    expect(byJob.code).toBe(0);
    expect(byJob.stdout).toBe("replayed 1 dead letter\n");
    expect(await rows(`SELECT id FROM {p}queue WHERE id = $1`, [d])).toHaveLength(1);

    expectOneLineError(await cli(["dead-letters", "replay"]), EXIT.usage, /give at least one dead letter id, or --job NAME or --reason REASON/);
    expectOneLineError(await cli(["dead-letters", "replay", a!, "--job", "x"]), EXIT.usage, /ids or a filter \(--job, --reason\), not both/);
  });

  it("replays by reason alone, as the library and the API do (it was an unknown option)", async () => {
    const { cli } = await fresh();
    const [e] = await deadLetters(cli, ["SKU-5"]);
    const misspelt = await cli(["dead-letters", "replay", "--reason", "exausted"]);
    expect(misspelt.code).not.toBe(0);
    expect(misspelt.stderr).toMatch(/reason/);
    const byReason = await cli(["dead-letters", "replay", "--reason", "exhausted", "--json"]);
    expect(byReason.code).toBe(0);
    expect(json(byReason)).toMatchObject({ replayed: [e], remaining: 0 });
  });

  it("refuses a replay while a live job holds the idempotency key (exit 5), then discards", async () => {
    const { cli, rows } = await fresh();
    const [dead] = await deadLetters(cli, ["SKU-7"], ["--key", "sku-7"]);
    const live = await cli(["enqueue", "sync-inventory", '{"sku":"SKU-7"}', "--key", "sku-7"]);
    expect(live.code).toBe(0);
    expectOneLineError(await cli(["dead-letters", "replay", dead!]), EXIT.conflict, /a queued or running job already has its id or idempotency key/);
    expect(await rows(`SELECT 1 FROM {p}dead_letters WHERE id = $1`, [dead])).toHaveLength(1);

    const discard = await cli(["dead-letters", "discard", dead!]);
    expect(discard).toEqual({ code: 0, stdout: `discarded ${dead}\n`, stderr: "" });
    expect(await rows(`SELECT 1 FROM {p}dead_letters`)).toHaveLength(0);
    const again = await cli(["dead-letters", "discard", dead!]);
    expectOneLineError(again, EXIT.notFound, new RegExp(`no dead letter with id ${dead}`));
    expectOneLineError(await cli(["dead-letters", "discard"]), EXIT.usage, /missing argument/);
  });
});

describe("jobs", () => {
  it("lists, shows, runs now and cancels a queued job, and shows one that finished (after enqueue printed its id there was no way to look)", async () => {
    const { cli, rows } = await fresh();
    const later = json<{ id: string }>(await cli(["enqueue", "send-reminder", '{"email":"ada@example.com","about":"x"}', "--delay", "10m", "--json"]));
    const other = json<{ id: string }>(await cli(["enqueue", "send-reminder", '{"email":"bob@example.com","about":"y"}', "--delay", "10m", "--json"]));
    const listed = await cli(["jobs", "list", "--job", "send-reminder", "--status", "queued"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^id\\s+job\\s+status\\s+due at[\\s\\S]*${other.id}\\s+send-reminder\\s+queued[\\s\\S]*${later.id}`));
    const page = json<{ items: Array<{ id: string }>; nextCursor: string | null }>(await cli(["jobs", "list", "--limit", "1", "--json"]));
    expect(page.items.map((j) => j.id)).toEqual([other.id]);
    expect((await cli(["jobs", "list", "--limit", "1"])).stdout).toContain("more: pgtick jobs list --limit 1 --cursor ");
    expect((await cli(["jobs", "list", "--status", "done"])).code).toBe(EXIT.rejected);

    const shown = await cli(["jobs", "show", later.id]);
    expect(shown.stdout).toContain(`status:          queued`);
    expect(shown.stdout).toContain(`"about": "x"`);
    const moved = await cli(["jobs", "run", later.id]);
    expect(moved.stdout).toBe(`${later.id} is due now\n`);
    expect((await cli(["jobs", "run", later.id])).stdout).toMatch(/was due already .*: it keeps its place/);
    expect((await cli(["jobs", "cancel", other.id])).stdout).toBe(`cancelled ${other.id}\n`);
    expect(await rows(`SELECT 1 FROM {p}queue WHERE id = $1`, [other.id])).toHaveLength(0);
    expectOneLineError(await cli(["jobs", "cancel", other.id]), EXIT.notFound, /not_found|no (queued )?job/);

    expect((await cli(["tick", "--json"])).code).toBe(0);
    const done = json<{ status: string; attempts: Array<{ outcome: string }> }>(await cli(["jobs", "show", later.id, "--json"]));
    expect(done).toMatchObject({ status: "succeeded", attempts: [{ outcome: "succeeded" }] });
    expect((await cli(["jobs", "show", later.id])).stdout).toMatch(/attempts \(1\):\n  1 succeeded/);
    expectOneLineError(await cli(["jobs", "show", "00000000-0000-4000-8000-000000000000"]), EXIT.notFound, /no job with id/);
    // One a tick is running: its tick owns it.
    const running = json<{ id: string }>(await cli(["enqueue", "send-reminder", '{"email":"cy@example.com","about":"z"}', "--json"]));
    await rows(`UPDATE {p}queue SET status = 'running', attempt = 1, lease_owner = gen_random_uuid(), lease_expires_at = now() + interval '1 minute' WHERE id = $1`, [running.id]);
    for (const verb of ["cancel", "run"]) expect((await cli(["jobs", verb, running.id])).code).toBe(EXIT.conflict);
  });
});

describe("runs", () => {
  it("lists the run history with filters and shows one run whole; a bad filter or an unknown run is one line", async () => {
    const { cli } = await fresh();
    const [id] = await deadLetters(cli, ["SKU-9"], ["--correlation-id", "restock-9"]);
    const list = await cli(["runs", "list", "--correlation-id", "restock-9"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/run\s+job\s+job id\s+attempt\s+outcome/);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain("dead_lettered");
    const page = json<{ items: Array<{ id: string; jobId: string }> }>(await cli(["runs", "list", "--job-id", id!, "--json"]));
    expect(page.items).toHaveLength(1);
    const show = await cli(["runs", "show", page.items[0]!.id]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`job:             sync-inventory (${id})`);
    expect(show.stdout).toMatch(/stack:\n.*Error/);
    expect((await cli(["runs", "list", "--outcome", "succeeded", "--correlation-id", "restock-9"])).stdout).toContain("no runs");
    expectOneLineError(await cli(["runs", "list", "--outcome", "won"]), EXIT.rejected, /--outcome must be one of/);
    expectOneLineError(await cli(["runs", "list", "--since", "yesterday"]), EXIT.rejected, /since must be an ISO 8601 time/);
    expectOneLineError(await cli(["runs", "show", "123456789"]), EXIT.notFound, /no run with id 123456789/);
  });
});

describe("schedules", () => {
  it("lists, pauses, resumes and runs the module's schedules", async () => {
    const { cli, rows } = await fresh();
    const list = await cli(["schedules", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/tokyo-digest\s+active\s+tokyo-digest\s+\* \* \* \* \*\s+Asia\/Tokyo/);
    const next = json<{ items: Array<{ name: string; nextRuns: string[] }>; nextCursor: string | null }>(await cli(["schedules", "list", "--next", "3", "--json"]));
    expect(next.items[0]!.nextRuns).toHaveLength(3);
    expect(next.nextCursor).toBeNull();
    // The API's range, 0 to 100 (it was 1 to 20 here).
    for (const [n, runs] of [["0", 0], ["50", 50]] as const) {
      const r = json<{ items: Array<{ nextRuns: string[] }> }>(await cli(["schedules", "list", "--next", n, "--json"]));
      expect(r.items[0]!.nextRuns).toHaveLength(runs);
    }
    const tooMany = await cli(["schedules", "list", "--limit", "500", "--next", "20"]);
    expect([tooMany.code, tooMany.stderr]).toEqual([EXIT.rejected, expect.stringMatching(/limit × next must be at most 5000/)]);

    const paused = await cli(["schedules", "pause", "tokyo-digest"]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain("tokyo-digest: paused, every minute (Asia/Tokyo)");
    expect(await rows(`SELECT paused FROM {p}schedules WHERE name = 'tokyo-digest'`)).toEqual([{ paused: true }]);
    const resumed = json<{ paused: boolean; nextRuns: string[] }>(await cli(["schedules", "resume", "tokyo-digest", "--json"]));
    expect(resumed.paused).toBe(false);
    expect(resumed.nextRuns.length).toBeGreaterThan(0);

    const run = await cli(["schedules", "run", "tokyo-digest"]);
    expect(run.code).toBe(0);
    const id = /^([0-9a-f-]{36}) enqueued by schedule tokyo-digest, due now\n$/.exec(run.stdout)?.[1];
    expect(await rows(`SELECT job_name, payload FROM {p}queue WHERE id = $1`, [id])).toEqual([{ job_name: "tokyo-digest", payload: { edition: "minutely" } }]);

    expectOneLineError(await cli(["schedules", "pause", "nightly"]), EXIT.notFound, /no schedule named "nightly" is defined/);
    expectOneLineError(await cli(["schedules", "run"]), EXIT.usage, /missing argument; usage: pgtick schedules run <name>/);
    expectOneLineError(await withoutModule(["schedules", "list"]), EXIT.config, /schedules list needs your job definitions/);
  });
});

describe("stats", () => {
  it("shows depth, dead letters and the last tick", async () => {
    const { cli } = await fresh();
    const empty = await cli(["stats"]);
    expect(empty.stdout).toContain("no jobs queued, no dead letters, nothing ran in the last hour");
    expect(empty.stdout).toContain("last tick: never");
    await deadLetters(cli, ["SKU-1"]);
    await cli(["enqueue", "send-reminder", '{"email":"ada@example.com","about":"x"}', "--delay", "1h"]);
    const stats = await cli(["stats"]);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/send-reminder\s+1\s+0\s+-\s+0/);
    expect(stats.stdout).toMatch(/sync-inventory\s+0\s+0\s+-\s+1\s+0\s+1/);
    expect(stats.stdout).toMatch(/last tick: \d{4}-/);
    const s = json<{ queue: Array<{ job: string; count: number }>; deadLetters: Array<{ job: string; count: number }> }>(await cli(["stats", "--json"]));
    expect(s.queue).toEqual([expect.objectContaining({ job: "send-reminder", status: "queued", count: 1 })]);
    expect(s.deadLetters).toEqual([expect.objectContaining({ job: "sync-inventory", count: 1 })]);
  });

  it("says a page of runs that came back empty has more to read, and a replay's count of what is left that stopped at its limit with a +", async () => {
    const { cli, rows } = await fresh();
    await rows(`INSERT INTO {p}runs (job_id, job_name, attempt, outcome, finished_at, duration_ms) SELECT gen_random_uuid(), 'send-reminder', 1, 'succeeded', now(), 5 FROM generate_series(1, 3)`);
    await rows(`INSERT INTO {p}runs (job_id, job_name, attempt, outcome, finished_at, duration_ms) SELECT gen_random_uuid(), 'send-reminder', 1, 'retried', now(), 5 FROM generate_series(1, 4100)`);
    const first = await cli(["runs", "list", "--outcome", "succeeded"]);
    expect(first.stdout).toMatch(/^no runs on this page, more may follow\nmore: pgtick runs list --outcome succeeded --cursor \S+\n$/);
    const cursor = /--cursor (\S+)/.exec(first.stdout)![1]!;
    expect((await cli(["runs", "list", "--outcome", "succeeded", "--cursor", cursor, "--json"])).stdout).toMatch(/"outcome": ?"succeeded"/);
    await rows(`INSERT INTO {p}dead_letters (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
                SELECT gen_random_uuid(), 'sync-inventory', '{"sku":"S"}', 1, 1, 'permanent', now(), now() FROM generate_series(1, 11500)`);
    const replay = await cli(["dead-letters", "replay", "--job", "sync-inventory"]);
    expect(replay.stdout).toMatch(/^replayed 1000 dead letters\n10000\+ left for sync-inventory\nmore: pgtick dead-letters replay --job sync-inventory --cursor \S+\n$/);
    // Each call goes on from where the last stopped.
    let out = replay.stdout;
    const counts: number[] = [];
    for (let more = /--cursor (\S+)/.exec(out); more; more = /--cursor (\S+)/.exec(out)) {
      out = (await cli(["dead-letters", "replay", "--job", "sync-inventory", "--cursor", more[1]!])).stdout;
      counts.push(Number(/^replayed (\d+)/.exec(out)![1]));
    }
    expect(counts.reduce((a, b) => a + b, 1000)).toBe(11_500);
  });

  it("marks a count that stopped at its limit with a + (10000 read as exact)", async () => {
    const { cli, rows } = await fresh();
    await rows(`INSERT INTO {p}queue (id, job_name, payload, run_at)
                SELECT gen_random_uuid(), 'send-reminder', '{"email":"a@example.com","about":"x"}', now() + interval '1 hour' FROM generate_series(1, 10001)`);
    const stats = await cli(["stats"]);
    expect(stats.stdout).toMatch(/send-reminder\s+10000\+\s+0\s/);
  });

  // The minutes are the 50 busiest jobs' of the hour: a job that ran less showed 0 succeeded and 0 failed.
  it("says it does not know the last hour's counts of a job less busy than the 50 it has them for", async () => {
    const { cli, rows } = await fresh();
    await rows(`INSERT INTO {p}metrics (minute, job_name, succeeded) SELECT date_trunc('minute', now()) - interval '2 minutes', 'busy-' || g, 100 FROM generate_series(1, 50) g`);
    await rows(`INSERT INTO {p}metrics (minute, job_name, succeeded, failed, retried) VALUES (date_trunc('minute', now()) - interval '2 minutes', 'send-reminder', 7, 3, 3)`);
    await rows(`INSERT INTO {p}queue (id, job_name, payload, run_at) VALUES (gen_random_uuid(), 'send-reminder', '{"email":"a@example.com","about":"x"}', now() + interval '1 hour')`);
    const stats = (await cli(["stats"])).stdout;
    expect(stats).toMatch(/busy-1\s+0\s+0\s+-\s+0\s+100\s+0/);
    expect(stats).toMatch(/send-reminder\s+1\s+0\s+-\s+0\s+-\s+-/);
    expect(stats).toContain(`("-": the last hour's counts are kept for the 50 busiest jobs of it)`);
  });
});

// `npm run dev` as a platform: its cron, kicks and extra ticks are all invocations of its own
// /api/tick, they overlap as on a platform, and stop waits for the ticks it runs.
import { describe, expect, it } from "vitest";
import { createLocalPlatform, nextSlot } from "../src/dev/local-platform.js";
import { urlHost, withoutPassword } from "../src/dev/server.js";
import { readTickRequest } from "../src/http/tick-request.js";

const settle = () => new Promise((r) => setTimeout(r, 5));

const recording = () => {
  const sent: Array<{ url: string; auth: string | null; kick: boolean; handoff: string | undefined; async: boolean }> = [];
  const releases: Array<() => void> = [];
  const fetcher = (async (input: string | URL | Request) => {
    const req = input as Request;
    const r = readTickRequest((name) => req.headers.get(name) ?? undefined);
    sent.push({ url: req.url, auth: req.headers.get("authorization"), kick: r.kick ?? false, handoff: r.handoff ? `${r.handoff.slot}` : undefined, async: r.async ?? false });
    // Answers like the server does (202 at once) only when the test lets it, to hold a request in flight.
    await new Promise<void>((resolve) => releases.push(resolve));
    return new Response('{"accepted":true}', { status: 202 });
  }) as typeof fetch;
  return { sent, releases, fetcher };
};

describe("the dev server's local platform", () => {
  it("fires on multiples of the interval, like a cron at :00", () => {
    expect(nextSlot(Date.UTC(2030, 0, 1, 9, 0, 45), 60_000)).toBe(Date.UTC(2030, 0, 1, 9, 1, 0));
    expect(nextSlot(Date.UTC(2030, 0, 1, 9, 1, 0), 60_000)).toBe(Date.UTC(2030, 0, 1, 9, 2, 0));
    expect(nextSlot(12_300, 5_000)).toBe(15_000);
  });

  it("invokes its own /api/tick with CRON_SECRET for the cron, kicks and handed-over slots, each asked to answer at once", async () => {
    const r = recording();
    const local = createLocalPlatform({ tickUrl: () => "http://dev.test/api/tick", cronSecret: "s3", intervalMs: 3_600_000, onError: () => {}, fetch: r.fetcher });
    local.start();
    local.kick();
    // Kicks while one is out share one more; cron ticks and extra ticks never wait for each other.
    local.kick();
    local.kick();
    local.spawn([{ slot: 2, token: crypto.randomUUID() }, { slot: 3, token: crypto.randomUUID() }]);
    await settle();
    expect(r.sent.map((s) => [s.kick, s.handoff])).toEqual([[false, undefined], [true, undefined], [false, "2"], [false, "3"]]);
    expect(r.sent.every((s) => s.url === "http://dev.test/api/tick" && s.auth === "Bearer s3" && s.async)).toBe(true);
    r.releases[1]!();
    await settle();
    // The kick's one rerun after the first came back.
    expect(r.sent.filter((s) => s.kick)).toHaveLength(2);
    for (const release of r.releases) release();
    await local.stop();
  });

  it("stop waits for the ticks it tracks, and starts none after", async () => {
    const r = recording();
    const local = createLocalPlatform({ tickUrl: () => "http://dev.test/api/tick", cronSecret: "s", intervalMs: 3_600_000, onError: () => {}, fetch: r.fetcher });
    let finish!: () => void;
    local.track(new Promise<void>((resolve) => (finish = resolve)));
    let stopped = false;
    const stopping = local.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    expect(local.running).toBe(1);
    finish();
    await stopping;
    expect(local.running).toBe(0);
    local.kick();
    local.spawn([{ slot: 1, token: crypto.randomUUID() }]);
    await settle();
    expect(r.sent).toEqual([]);
  });

  it("stop says how many ticks failed while it waited (their jobs may stay claimed), and only those", async () => {
    const local = createLocalPlatform({ tickUrl: () => "http://dev.test/api/tick", cronSecret: "s", intervalMs: 3_600_000, onError: () => {}, fetch: recording().fetcher });
    local.track(Promise.reject(new Error("before stopping")));
    await settle();
    let fail!: (e: Error) => void;
    local.track(new Promise<void>((_, reject) => (fail = reject)));
    const stopping = local.stop();
    fail(new Error("the database did not answer"));
    expect(await stopping).toBe(1);
  });
});

describe("the address the local cron and the printed links use", () => {
  it("is the address the server listens on: an IPv6 literal in brackets, any address through a loopback", () => {
    expect(["127.0.0.1", "::1", "0.0.0.0", "::", "192.168.1.5", "dev.local"].map(urlHost)).toEqual(["localhost", "[::1]", "127.0.0.1", "localhost", "192.168.1.5", "dev.local"]);
  });
});

describe("the database URL the dev server prints", () => {
  it("masks a password in the URL's user part and in its query (libpq's password=; the query's was printed)", () => {
    expect(withoutPassword("postgres://u:hunter2@db.example.com:5432/app")).toBe("postgres://u:***@db.example.com:5432/app");
    expect(withoutPassword("postgres://u@db.example.com/app?sslmode=require&password=hunter2-inquery")).not.toContain("hunter2");
    expect(withoutPassword("postgres://u@db.example.com/app?PASSWORD=x1")).not.toContain("x1");
  });
});

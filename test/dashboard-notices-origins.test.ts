// Small dashboard rules: a count that stopped at its limit is a lower bound, the origins it takes posts from, and an edit form that fits its limit.
import { describe, expect, it } from "vitest";
import { noticeFor } from "../src/dashboard/notices.js";

describe("the notice after replaying all matching", () => {
  it("says a count of what still matches that stopped at its limit is a lower bound (10000 more, of 98,000)", () => {
    expect(noticeFor("replayed", "1000", "0", "10000")).toContain("10000+ more match");
    expect(noticeFor("replayed", "1000", "0", "42")).toContain(" 42 more match");
    expect(noticeFor("replayed", "3", "0", "0")).toBe("Replayed 3 dead letters: queued to run now.");
  });
});

describe("DASHBOARD_ORIGINS", () => {
  it("takes origins as pasted from an address bar (a trailing slash, capitals) as a browser sends them, and refuses one that is no origin", async () => {
    const { resolveAuth } = await import("../src/dashboard/dashboard-settings.js");
    const auth = resolveAuth({ DASHBOARD_PASSWORD: "a-long-enough-password", DASHBOARD_ORIGINS: "https://Admin.Example.com/, http://localhost:8080" });
    expect(auth).toMatchObject({ configured: true, origins: ["https://admin.example.com", "http://localhost:8080"] });
    expect(resolveAuth({ DASHBOARD_PASSWORD: "a-long-enough-password", DASHBOARD_ORIGINS: "admin.example.com" })).toMatchObject({ configured: false, problem: expect.stringMatching(/DASHBOARD_ORIGINS/) });
    // Another scheme's origin is kept as given, never as "null" (the opaque origin sandboxed frames send).
    const extension = resolveAuth({ DASHBOARD_PASSWORD: "a-long-enough-password", DASHBOARD_ORIGINS: "chrome-extension://abcdefghijklmnop/" });
    expect(extension).toMatchObject({ configured: true, origins: ["chrome-extension://abcdefghijklmnop"] });
  });
});

describe("an edited replay's form", () => {
  it("holds a payload at the 1 MiB limit within the form limit, sent back unchanged (indented, it made 9 MB)", async () => {
    const { pretty } = await import("../src/dashboard/format.js");
    const { SESSION_FORM_BYTES } = await import("../src/dashboard/form-body.js");
    const payload = { reason: "r", data: { series: { values: Array.from({ length: 500_000 }, (_, i) => i % 10) } } };
    expect(JSON.stringify(payload).length).toBeLessThan(1_048_576);
    // As a browser sends a textarea: its line breaks as CRLF, urlencoded.
    const body = new URLSearchParams({ payload: pretty(payload).replaceAll("\n", "\r\n"), csrf: "x".repeat(43) }).toString();
    expect(body.length).toBeLessThan(SESSION_FORM_BYTES);
    expect(JSON.parse(pretty(payload))).toEqual(payload);
    expect(pretty({ a: 1 })).toBe('{\n  "a": 1\n}');
  });
});

// What a page says after an action (a count that stopped at its limit is a lower bound), and the origins it takes posts from.
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
  });
});

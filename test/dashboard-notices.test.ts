// What a page says after an action: counts that stopped at their limit are said to be at least that.
import { describe, expect, it } from "vitest";
import { noticeFor } from "../src/dashboard/notices.js";

describe("the notice after replaying all matching", () => {
  it("says a count of what still matches that stopped at its limit is a lower bound (10000 more, of 98,000)", () => {
    expect(noticeFor("replayed", "1000", "0", "10000")).toContain("10000+ more match");
    expect(noticeFor("replayed", "1000", "0", "42")).toContain(" 42 more match");
    expect(noticeFor("replayed", "3", "0", "0")).toBe("Replayed 3 dead letters: queued to run now.");
  });
});

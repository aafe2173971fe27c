// `npm run dev`'s text log: one line per event, whatever a message or a field holds. A handler's
// message and a caller's correlation id went to the terminal raw: an escape sequence cleared the
// screen and retitled the terminal, a line feed forged a log line of its own.
import { describe, expect, it } from "vitest";
import { devLogger } from "../src/dev/log.js";

describe("the dev server's text log", () => {
  it("writes control characters of messages and fields as escapes, one line per event", () => {
    const lines: string[] = [];
    const log = devLogger("debug", (line) => lines.push(line), true);
    log.log("info", "sent\n10:16:00 error FAKE line", { correlationId: "c\u001b[2J\u001b]0;owned\u0007", note: "a b\u009b", n: 3 });
    log.log("warn", "plain", { job: "send-welcome" });
    expect(lines).toHaveLength(2);
    // The level's own colour is the one escape a line holds.
    const [first] = lines;
    expect(first!.replace("\x1b[36m", "").replace("\x1b[0m", "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(first).toContain("sent\\u000a10:16:00 error FAKE line");
    expect(first).toContain("correlationId=c\\u001b[2J\\u001b]0;owned\\u0007");
    expect(first).toContain('note="a b\\u009b"');
    expect(lines[1]).toMatch(/ plain {2}job=send-welcome$/);
  });
});

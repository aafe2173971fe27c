// Job ids are UUIDv7: well-formed, time-ordered, strictly increasing within a process (also many
// in one millisecond, and when the clock steps back), and PostgreSQL's uuid order is their order.
import { describe, expect, it } from "vitest";
import { formatUuid, newJobId, uuidv7Bytes, uuidv7Time } from "../src/ids.js";
import { isUuid } from "../src/store/shared/sql.js";
import { harness } from "./support/harness.js";

const h = await harness("ids");
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("job ids", () => {
  it("are UUIDv7 carrying the time they were made", () => {
    const before = Date.now();
    const id = newJobId();
    expect(id).toMatch(V7);
    expect(isUuid(id)).toBe(true);
    expect(uuidv7Time(id)).toBeGreaterThanOrEqual(before);
    expect(uuidv7Time(id)).toBeLessThanOrEqual(Date.now());
    expect(uuidv7Time(crypto.randomUUID())).toBeNull();
  });

  it("lay out the time, the counter and the version bits as RFC 9562 says", () => {
    const ms = 0x0123_4567_89ab;
    const id = formatUuid(uuidv7Bytes(ms, 2 ** 42 - 1, 0xdeadbeef));
    expect(id).toBe("01234567-89ab-7fff-bfff-ffffdeadbeef");
    expect(formatUuid(uuidv7Bytes(ms, 0, 0))).toBe("01234567-89ab-7000-8000-000000000000");
    expect(uuidv7Time(id)).toBe(ms);
  });

  it("increase strictly: many in one millisecond, and when the clock steps back", () => {
    const ids = [
      ...Array.from({ length: 50_000 }, () => newJobId(1_900_000_000_000)),
      ...Array.from({ length: 10 }, () => newJobId(1_800_000_000_000)),
      newJobId(1_900_000_000_001),
    ];
    for (const id of ids) expect(id).toMatch(V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    // The clock stepped back: the ids keep the time already reached.
    expect(uuidv7Time(ids[50_005]!)).toBe(1_900_000_000_000);
  });

  it("sort in PostgreSQL in the order they were made (uuid order is byte order)", async () => {
    const made = Array.from({ length: 2_000 }, (_, i) => newJobId(Date.now() + Math.floor(i / 100)));
    const shuffled = [...made].sort(() => Math.random() - 0.5);
    const rows = await h.rows<{ id: string }>(`SELECT id::text AS id FROM unnest($1::uuid[]) AS u(id) ORDER BY id`, [shuffled]);
    expect(rows.map((r) => r.id)).toEqual(made);
  });
});

import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import type { Tables } from "../shared/tables.js";
import { type BulkReplayResult, type BulkReplaySelector, MAX_BULK_REPLAY, type Read, type ReplayRekey, replayStep } from "./replay-bulk.js";

/** How often a part of a replay reads its letters again when they changed between its read and its replay. */
const TRIES = 3;

/**
 * A bulk replay with limits in code: the letters' keys are computed again from their payloads, read
 * first (see src/admin/replay-keys.ts). A read brings at most READ_BYTES of payloads into the app (all of
 * a thousand letters of 1 MB each timed out, and over Neon's HTTP endpoint 12 MB failed as an outage): a
 * selection whose payloads are more is replayed in parts, each a read and a replay, and the result is
 * theirs together. A replay stores keys only for the letters as read: where one was replayed or changed
 * between the two, it changes nothing, and its part is read again (three times at most, then `conflict`).
 */
export const rekeyedReplay = async (db: Db, t: Tables, selector: BulkReplaySelector, rekey: ReplayRekey): Promise<BulkReplayResult> => {
  const replayed: string[] = [];
  const skipped: BulkReplayResult["skipped"] = [];
  let sel = selector;
  let began: string | undefined;
  for (;;) {
    const { done, read } = await part(db, t, sel, rekey, began);
    // A walk keeps the start its first read saw: its replays select only letters dead by then.
    began ??= read.began ?? undefined;
    replayed.push(...done.replayed);
    skipped.push(...done.skipped);
    const result = { replayed, skipped, remaining: done.remaining, nextCursor: done.nextCursor };
    if (read.covered.length >= read.picked) return result;
    if ("ids" in sel) {
      const covered = new Set(read.covered);
      sel = { ids: sel.ids.filter((id) => !covered.has(String(id).toLowerCase())) };
    } else {
      const left = (sel.limit ?? MAX_BULK_REPLAY) - read.covered.length;
      if (left <= 0 || done.nextCursor === null) return result;
      sel = { ...sel, limit: left, cursor: done.nextCursor };
    }
  }
};

/** One read and the replay of what it covered. */
const part = async (db: Db, t: Tables, sel: BulkReplaySelector, rekey: ReplayRekey, began: string | undefined) => {
  for (let attempt = 1; ; attempt++) {
    const read = (await replayStep(db, t, sel, { rekey, began })) as Read;
    const keyed = read.letters.map((l) => ({ ...l, ...rekey.keysOf(l.job, l.payload, l.id) }));
    // Cut short: this part replays the letters read, and the next part the rest.
    const mine: BulkReplaySelector = read.covered.length >= read.picked ? sel : "ids" in sel ? { ids: read.covered } : { ...sel, limit: read.covered.length };
    const done = await replayStep(db, t, mine, { rekey, began: began ?? read.began ?? undefined, keyed });
    if (!("stale" in done)) return { done: done as BulkReplayResult, read };
    if (attempt >= TRIES) throw new JobsError("conflict", "the dead letters changed while being replayed; try again");
  }
};

/**
 * Job ids: UUIDv7 (RFC 9562), time-ordered, so the queue's primary key lists jobs newest first
 * without an index of its own. The first 48 bits are the Unix time in ms; the next 42 (the 12 of
 * rand_a and the top 30 of rand_b) are a counter that starts at a random value each millisecond
 * and counts up within it, so ids made in one process are strictly increasing; the last 32 bits
 * are random. A clock that steps back keeps counting from the last id instead.
 */

const COUNTER_BITS = 42;
const COUNTER_MAX = 2 ** COUNTER_BITS - 1;

let lastMs = -1;
let counter = 0;

// Random words drawn 256 at a time: one call into the platform's CSPRNG per id was about three
// quarters of the time it takes to prepare a job for a bulk enqueue.
const pool = new Uint32Array(256);
let next = pool.length;
const randomUint32 = (): number => {
  if (next === pool.length) {
    crypto.getRandomValues(pool);
    next = 0;
  }
  return pool[next++]!;
};
// A new millisecond starts the counter below 2^41, leaving at least 2^41 ids to count up.
const seed = (): number => (randomUint32() & 0x3ff) * 2 ** 31 + (randomUint32() >>> 1);

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The bytes of a UUIDv7 for `ms` and a 42-bit `count`, the last 32 bits from `tail`. */
export const uuidv7Bytes = (ms: number, count: number, tail: number): Uint8Array => {
  const b = new Uint8Array(16);
  // 48-bit time, big-endian (beyond 2^32, so split by division rather than bit shifts).
  const high = Math.floor(ms / 2 ** 16);
  b[0] = (high >>> 24) & 0xff;
  b[1] = (high >>> 16) & 0xff;
  b[2] = (high >>> 8) & 0xff;
  b[3] = high & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  const top = Math.floor(count / 2 ** 30); // 12 bits: rand_a
  const low = count % 2 ** 30; // 30 bits: top of rand_b
  b[6] = 0x70 | (top >>> 8);
  b[7] = top & 0xff;
  b[8] = 0x80 | (low >>> 24);
  b[9] = (low >>> 16) & 0xff;
  b[10] = (low >>> 8) & 0xff;
  b[11] = low & 0xff;
  b[12] = (tail >>> 24) & 0xff;
  b[13] = (tail >>> 16) & 0xff;
  b[14] = (tail >>> 8) & 0xff;
  b[15] = tail & 0xff;
  return b;
};

export const formatUuid = (b: Uint8Array): string => {
  let s = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += "-";
    s += HEX[b[i]!];
  }
  return s;
};

/** A new job id: a UUIDv7 greater than every id this process made before. */
export const newJobId = (now: number = Date.now()): string => {
  if (now > lastMs) {
    lastMs = now;
    counter = seed();
  } else if (counter < COUNTER_MAX) {
    counter++;
  } else {
    // 2^41 ids in one millisecond: borrow the next one.
    lastMs++;
    counter = seed();
  }
  return formatUuid(uuidv7Bytes(lastMs, counter, randomUint32()));
};

/** The time a UUIDv7 was made (ms since the epoch), or null for any other id. */
export const uuidv7Time = (id: string): number | null => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) return null;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID as text (any version): what PostgreSQL's `::uuid` takes. */
export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);

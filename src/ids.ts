import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix =
  'prod' | 'feed' | 'int' | 'wh' | 'evt' | 'rpt' | 'key' | 'sync' | 'req' | 'dlv' | 'pub' | 'fdl';

/** Random base62 string of the given length (about 5.95 bits per character). */
export function randomBase62(length: number): string {
  // 62 * 4 = 248: bytes at or above 248 are dropped so every character is equally likely.
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

// One system call per 4 KiB of entropy instead of one per id (ids are made on every request).
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** A new prefixed identifier, e.g. `prod_4kXq1Zp9Lm2Ab7Rt`. */
export function newId(prefix: IdPrefix, length = 16): string {
  return `${prefix}_${randomBase62(length)}`;
}

/** Characters of a sortable id that carry the time (62^7 ms: until the year 2081). */
const TIME_CHARS = 7;

/**
 * A new prefixed identifier whose first characters are the time in ms (base62, fixed width,
 * so ids sort by creation), the rest random: `prod_` + 16 characters as newId's. Ids made
 * together share a prefix, so a bulk insert appends to the end of a B-tree index instead of
 * touching a random page of it per row. Not for secrets (the time is readable).
 */
export function newSortableId(prefix: IdPrefix, length = 16, now = Date.now()): string {
  let time = '';
  for (let t = Math.floor(now), i = 0; i < TIME_CHARS; i++, t = Math.floor(t / 62))
    time = ALPHABET[t % 62]! + time;
  return `${prefix}_${time}${randomBase62(Math.max(0, length - TIME_CHARS))}`;
}

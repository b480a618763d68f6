import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix =
  'prod' | 'feed' | 'int' | 'wh' | 'evt' | 'rpt' | 'key' | 'sync' | 'req' | 'dlv';

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

import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Search cursors: `<offset>.<MAC>`, base64url, signed (HMAC-SHA256) with a key derived
 * (HKDF) from the server's secret (SECRET_KEY or the DATA_DIR key file, as the dashboard's
 * sessions) over the offset and the search it continues (query terms, filters). A cursor
 * that was changed, or sent with another search, is refused; offsets stop at MAX_OFFSET.
 */

export const MAX_OFFSET = 10_000;

export class CursorSigner {
  private key: Buffer | undefined;

  /** `secret` is read on first use. */
  constructor(private readonly secret: () => Buffer) {}

  private mac(offset: number, search: string): Buffer {
    this.key ??= Buffer.from(
      hkdfSync('sha256', this.secret(), Buffer.alloc(0), 'agentshelf ucp cursor v1', 32),
    );
    const digest = createHash('sha256').update(search).digest('base64url');
    return createHmac('sha256', this.key).update(`${offset}\n${digest}`).digest().subarray(0, 16);
  }

  /** The cursor of the page starting at `offset` of the search `search` (its canonical text). */
  sign(offset: number, search: string): string {
    return `${offset.toString(36)}.${this.mac(offset, search).toString('base64url')}`;
  }

  /** The offset a cursor holds, or undefined when it is not one we gave for this search. */
  verify(cursor: string, search: string): number | undefined {
    const m = /^([0-9a-z]{1,4})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
    if (!m) return undefined;
    const offset = parseInt(m[1]!, 36);
    if (offset > MAX_OFFSET) return undefined;
    // Compared as text: a changed padding bit of the last character is a changed cursor too.
    const given = Buffer.from(m[2]!);
    const expected = Buffer.from(this.mac(offset, search).toString('base64url'));
    return given.length === expected.length && timingSafeEqual(given, expected)
      ? offset
      : undefined;
  }
}

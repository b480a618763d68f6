/**
 * How the store keeps a moment: fixed-length ISO-8601 UTC text, `YYYY-MM-DDTHH:MM:SS.sssZ`
 * (24 characters, always milliseconds, always `Z`). Text of one length and one zone compares
 * in time order byte by byte, so SQLite (text) and PostgreSQL (text, or timestamptz cast from
 * it) filter and sort it the same way, and its UTC day is its first ten characters
 * (DialectSql.dayOf). Every writer of a timestamp that is compared or grouped by day (audit
 * log, discovery request log, events) goes through storedTimestamp.
 */
export const STORED_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A moment (a Date or ms since the epoch) as the store keeps it. */
export function storedTimestamp(at: Date | number): string {
  const text = (typeof at === 'number' ? new Date(at) : at).toISOString();
  // toISOString writes years past 9999 as +YYYYYY, which would sort before 2026.
  if (text.length !== 24) throw new Error(`timestamp: ${text} is outside years 0000-9999`);
  return text;
}

/** The longest Retry-After a caller waits; a longer one is cut to this. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

/** Retry-After as seconds (a number or an HTTP date), capped; undefined when unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let seconds: number;
  // Delay-seconds; Shopify sends a decimal one ("2.0"), which must not read as a date.
  if (/^\d+(\.\d+)?$/.test(trimmed)) seconds = Number(trimmed);
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    seconds = Math.max(0, (at - now.getTime()) / 1000);
  }
  return Math.min(seconds, MAX_RETRY_AFTER_SECONDS);
}

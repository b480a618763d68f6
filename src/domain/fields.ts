import { z } from 'zod';
import { isHttpUrl } from './catalogue/url.js';
import { textProblem } from '../text.js';

/** Marks an issue as "too long" so the error handler can answer FIELD_TOO_LONG. */
export const TOO_LONG = 'too_long';

/** Length in Unicode code points, which is what a person counts as characters. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * A string field: well-formed Unicode, no NUL, at most `max` characters (code points);
 * `min` 1 also rejects strings that are empty or only white space.
 */
export function text(max: number, options: { min?: number } = {}) {
  const min = options.min ?? 0;
  return z.string().check((ctx) => {
    const value = ctx.value;
    const problem = textProblem(value);
    if (problem) {
      ctx.issues.push({ code: 'custom', input: value, message: problem });
    } else if (min > 0 && value.trim().length === 0) {
      ctx.issues.push({ code: 'custom', input: value, message: 'must not be empty' });
    } else if (codePointLength(value) > max) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `must be at most ${max} characters`,
        params: { reason: TOO_LONG },
      });
    }
  });
}

/** An absolute http(s) URL of at most `max` characters. */
export function httpUrl(max = 2048) {
  return text(max, { min: 1 }).check((ctx) => {
    if (!isHttpUrl(ctx.value)) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: 'must be an absolute http or https URL',
      });
    }
  });
}

/** GS1 check digit of a GTIN-8, -12, -13 or -14. */
export function isValidGtin(value: string): boolean {
  const n = value.length;
  if (n !== 8 && n !== 12 && n !== 13 && n !== 14) return false;
  // A loop over char codes: the feed pipeline checks every product's GTIN.
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    // Weights 3, 1, 3, ... from the digit left of the check digit.
    if (i < n - 1) sum += d * ((n - 1 - i) % 2 === 1 ? 3 : 1);
  }
  return (10 - (sum % 10)) % 10 === value.charCodeAt(n - 1) - 48;
}

/** The identifier form a merchant may use for its own ids (SKUs) and group ids. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Any JSON value (the values of `attributes`). One instance, so that the API document can
 * name it once (`JsonValue`) wherever it appears.
 */
export const JsonValue = z.json();

import { z } from 'zod';

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
    if (!value.isWellFormed()) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: 'must be valid Unicode (it has a lone surrogate)',
      });
    } else if (value.includes('\u0000')) {
      ctx.issues.push({ code: 'custom', input: value, message: 'must not contain NUL characters' });
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
    let url: URL | undefined;
    try {
      url = new URL(ctx.value);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
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
  if (!/^(\d{8}|\d{12}|\d{13}|\d{14})$/.test(value)) return false;
  const digits = [...value].map(Number);
  const check = digits.pop()!;
  let sum = 0;
  digits.reverse().forEach((d, i) => {
    sum += d * (i % 2 === 0 ? 3 : 1);
  });
  return (10 - (sum % 10)) % 10 === check;
}

/** The identifier form a merchant may use for its own ids (SKUs) and group ids. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

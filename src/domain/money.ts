/**
 * Money: integer minor units inside, decimals only at the API edge.
 * Conversions go through the decimal string, never through float multiplication,
 * so 0.1 + 0.2 style drift cannot creep in.
 */
import { EXPONENTS } from '../currencies.js';

// Funds, precious metals and testing codes that are not a merchant's selling currency.
const NOT_FOR_PRICES = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
]);

const KNOWN: ReadonlySet<string> = new Set(
  Intl.supportedValuesOf('currency').filter((c) => !NOT_FOR_PRICES.has(c)),
);

/** Largest price accepted, in major units. Keeps every minor amount a safe integer. */
export const MAX_PRICE = 1_000_000_000_000;

/**
 * Largest amount in minor units of any currency: 15 significant digits, all a double holds
 * (DBL_DIG). Up to it, the API's decimal number is exactly the stored amount, and the JSON
 * the database writes for a price matches JavaScript's digit for digit. No currency accepted
 * today reaches it (KWD's largest price is exactly 10^15 minor units); a 4-decimal one would.
 */
const MAX_MINOR = 10 ** 15;

/** The largest price of a currency, in minor units. */
export function maxMinorUnits(currency: string): number {
  return Math.min(MAX_PRICE * 10 ** currencyExponent(currency), MAX_MINOR);
}

export function isCurrency(code: string): boolean {
  return KNOWN.has(code);
}

/** Decimal places of a currency's minor unit (USD 2, JPY 0, KWD 3). */
export function currencyExponent(code: string): number {
  return EXPONENTS[code] ?? 2;
}

export class MoneyError extends Error {}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Converts a decimal amount (a JSON number or a decimal string) to minor units.
 * Throws MoneyError when the amount is negative, not finite, too large, or has
 * more decimals than the currency allows (10.999 USD, 5.5 JPY).
 */
export function toMinorUnits(amount: number | string, currency: string): number {
  const exponent = currencyExponent(currency);
  let text: string;
  if (typeof amount === 'number') {
    if (!Number.isFinite(amount)) throw new MoneyError('must be a finite number');
    if (amount < 0) throw new MoneyError('must not be negative');
    if (amount > MAX_PRICE) throw new MoneyError(`must be at most ${MAX_PRICE}`);
    text = plainDecimal(amount);
  } else {
    text = amount.trim();
  }
  const match = DECIMAL.exec(text);
  if (!match) {
    throw new MoneyError(
      text.startsWith('-') ? 'must not be negative' : 'must be a decimal number such as 19.99',
    );
  }
  const whole = match[1]!;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) {
    throw new MoneyError(
      exponent === 0
        ? `must be a whole number for ${currency}`
        : `must have at most ${exponent} decimal places for ${currency}`,
    );
  }
  const minor =
    BigInt(whole) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
  const max = maxMinorUnits(currency);
  if (minor > BigInt(max)) {
    throw new MoneyError(`must be at most ${fromMinorUnits(max, currency)}`);
  }
  return Number(minor);
}

/** Minor units back to the API's decimal number (7999 USD -> 79.99). */
export function fromMinorUnits(minor: number, currency: string): number {
  return Number(formatMinorUnits(minor, currency));
}

/** Minor units as a fixed-point decimal string (7999 USD -> "79.99", 500 JPY -> "500"). */
export function formatMinorUnits(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const negative = minor < 0;
  const abs = Math.abs(minor);
  if (exponent === 0) return `${negative ? '-' : ''}${abs}`;
  // Integer arithmetic (exact below 2^53, which minor units stay under): no string padding
  // per row, as feeds format millions of prices.
  const scale = 10 ** exponent;
  let whole = Math.floor(abs / scale);
  // The division rounds: one step back when it rounded up to the next whole.
  if (whole * scale > abs) whole--;
  const fraction = String(abs - whole * scale).padStart(exponent, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

// A JS number as a plain decimal string: 1e-7 -> "0.0000001", 1e21 -> "1000000000000000000000".
function plainDecimal(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  const [mantissa, expPart] = s.toLowerCase().split('e') as [string, string];
  const exp = Number(expPart);
  const [intPart, fracPart = ''] = mantissa.split('.') as [string, string?];
  const digits = intPart + fracPart;
  const point = intPart.length + exp;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

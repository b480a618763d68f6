import fc from 'fast-check';
import t from 'tap';
import {
  currencyExponent,
  formatMinorUnits,
  fromMinorUnits,
  MAX_PRICE,
  MoneyError,
  toMinorUnits,
} from '../../src/domain/money.js';

const CURRENCIES = [
  ['JPY', 0],
  ['USD', 2],
  ['EUR', 2],
  ['KWD', 3],
  ['BHD', 3],
] as const;

t.test(
  'minor units -> decimal -> minor units is exact for 0, 2 and 3 decimal currencies',
  async (t) => {
    for (const [currency, exponent] of CURRENCIES) {
      t.equal(currencyExponent(currency), exponent);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: MAX_PRICE * 10 ** exponent }), (minor) => {
          const decimal = fromMinorUnits(minor, currency);
          return (
            toMinorUnits(decimal, currency) === minor &&
            toMinorUnits(formatMinorUnits(minor, currency), currency) === minor
          );
        }),
        { numRuns: 2000 },
      );
    }
  },
);

t.test("a decimal typed with the currency's places converts without float drift", async (t) => {
  for (const [currency, exponent] of CURRENCIES) {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.integer({ min: 0, max: 10 ** exponent - 1 }),
        (whole, fraction) => {
          const text = exponent
            ? `${whole}.${String(fraction).padStart(exponent, '0')}`
            : String(whole);
          const expected = whole * 10 ** exponent + fraction;
          return (
            toMinorUnits(Number(text), currency) === expected &&
            toMinorUnits(text, currency) === expected
          );
        },
      ),
      { numRuns: 2000 },
    );
  }
  t.equal(toMinorUnits(0.3, 'USD'), 30, '0.3 is 30 cents');
  t.throws(
    () => toMinorUnits(0.1 + 0.2, 'USD'),
    /decimal places/,
    '0.1 + 0.2 is 0.30000000000000004: refused, not rounded',
  );
  t.equal(toMinorUnits(19.99, 'USD'), 1999);
  t.equal(toMinorUnits(1.15, 'USD'), 115, 'not 114.99999');
  t.equal(toMinorUnits(4.35, 'USD'), 435);
  t.equal(toMinorUnits(1e-7 * 0, 'USD'), 0);
});

t.test('more decimals than the currency has is an error naming the currency', async (t) => {
  for (const [currency, exponent] of CURRENCIES) {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99_999 }),
        fc.integer({ min: 1, max: 9 }),
        (whole, extra) => {
          const text = `${whole}.${'0'.repeat(exponent)}${extra}`;
          try {
            toMinorUnits(text, currency);
            return false;
          } catch (err) {
            return err instanceof MoneyError && err.message.includes(currency);
          }
        },
      ),
    );
  }
  t.throws(() => toMinorUnits(10.999, 'USD'), /at most 2 decimal places for USD/);
  t.throws(() => toMinorUnits(5.5, 'JPY'), /whole number for JPY/);
  t.throws(() => toMinorUnits(1e-7, 'USD'), /at most 2 decimal places/);
  t.equal(toMinorUnits('10.50000', 'USD'), 1050, 'trailing zeros are not extra places');
  t.throws(() => toMinorUnits(-0.01, 'USD'), /negative/);
  t.throws(() => toMinorUnits('-1', 'USD'), /negative/);
  t.throws(() => toMinorUnits(Number.NaN, 'USD'), /finite/);
  t.throws(() => toMinorUnits(MAX_PRICE + 1, 'USD'), /at most/);
  t.throws(() => toMinorUnits('1e3', 'USD'), /decimal number/);
  t.equal(toMinorUnits(1e21 / 1e10, 'USD'), 1e13, 'exponent notation from JS numbers is expanded');
});

t.test('formatMinorUnits writes fixed places', async (t) => {
  t.equal(formatMinorUnits(7999, 'USD'), '79.99');
  t.equal(formatMinorUnits(5, 'USD'), '0.05');
  t.equal(formatMinorUnits(500, 'JPY'), '500');
  t.equal(formatMinorUnits(12345, 'KWD'), '12.345');
  t.equal(formatMinorUnits(0, 'EUR'), '0.00');
});

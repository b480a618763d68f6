import fc from 'fast-check';
import t from 'tap';
import { isValidGtin } from '../../src/domain/fields.js';

/** GS1's rule, written the long way: weights 3 and 1 from the right, before the check digit. */
function gs1(value: string): boolean {
  if (!/^(\d{8}|\d{12}|\d{13}|\d{14})$/.test(value)) return false;
  const digits = [...value].map(Number);
  const check = digits.pop()!;
  const sum = digits.reverse().reduce((acc, d, i) => acc + d * (i % 2 === 0 ? 3 : 1), 0);
  return (10 - (sum % 10)) % 10 === check;
}

t.test('isValidGtin agrees with the GS1 check-digit rule on any string', async (t) => {
  const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 6, maxLength: 15 });
  fc.assert(
    fc.property(fc.oneof(digits, fc.string()), (s) => isValidGtin(s) === gs1(s)),
    {
      numRuns: 5000,
    },
  );
  for (const valid of ['4006381333931', '96385074', '036000291452', '00012345600012']) {
    t.ok(isValidGtin(valid), valid);
  }
  for (const invalid of ['4006381333932', '1234567', '٤٠٠٦٣٨١٣٣٣٩٣١', '4006381333931 ', '']) {
    t.notOk(isValidGtin(invalid), JSON.stringify(invalid));
  }
});

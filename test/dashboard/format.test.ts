import t from 'tap';
import { Formatter, localeOf } from '../../src/dashboard/format.js';
import { productBody, startTestServer } from '../support/server.js';
import { signInDashboard } from '../support/dashboard.js';
import { clockAt } from '../support/clock.js';

/** Intl writes no-break spaces (U+00A0, U+202F) between amount and sign: read as spaces. */
const spaced = (text: unknown) => String(text).replace(/[\u00a0\u202f]/g, ' ');

t.test('the language is the first one Accept-Language asks for that Intl can write', async (t) => {
  t.equal(localeOf(undefined), 'en', 'English when nothing is asked');
  t.equal(localeOf(''), 'en');
  t.equal(localeOf('de-DE,de;q=0.9,en;q=0.8'), 'de-DE');
  t.equal(localeOf('en;q=0.5, fr-CH'), 'fr-CH', 'by q, not by order');
  t.equal(localeOf('*'), 'en');
  t.equal(localeOf('not a tag!!, ja'), 'ja', 'a malformed tag is skipped');
  t.equal(localeOf('de;q=0'), 'en', 'q=0 means not this one');
});

t.test('money per currency with its ISO 4217 minor units, in the language asked', async (t) => {
  const now = () => new Date('2026-11-27T10:00:00Z');
  const en = new Formatter('en', now);
  t.equal(en.money(89.5, 'USD'), '$89.50');
  t.equal(en.money(129, 'USD'), '$129.00');
  t.equal(en.money(1200, 'JPY'), '¥1,200', 'JPY has no decimals');
  t.equal(spaced(en.money(1.5, 'KWD')), 'KWD 1.500', 'KWD has three');
  t.equal(en.money(null, 'USD'), '—');
  const de = new Formatter('de-DE', now);
  t.equal(spaced(de.money(89.5, 'EUR')), '89,50 €');
  t.equal(de.number(1234567), '1.234.567');
  t.equal(spaced(de.percent(0.125)), '12,5 %');
  t.equal(en.percent(0.125), '12.5%');
});

t.test('times: the short form or "5 minutes ago", exact UTC on hover', async (t) => {
  const en = new Formatter('en', () => new Date('2026-11-27T10:00:00Z'));
  const recent = String(en.when('2026-11-27T09:55:00.000Z'));
  t.match(recent, 'datetime="2026-11-27T09:55:00.000Z"');
  t.match(recent, 'title="2026-11-27 09:55:00 UTC"');
  t.match(recent, '>5 minutes ago</time>');
  t.match(String(en.when('2026-11-26T10:00:00Z')), '>yesterday</time>');
  t.match(String(en.when('2026-11-27T12:00:00Z')), '>in 2 hours</time>');
  const old = spaced(en.when('2026-10-01T08:05:00Z'));
  t.match(
    old,
    /datetime="2026-10-01T08:05:00.000Z" title="2026-10-01 08:05:00 UTC"\s*>Oct 1, 2026, 8:05\s?AM UTC<\/time/,
  );
  t.equal(en.when(null, 'never'), 'never');
  t.equal(en.when('not a date'), 'not a date', 'what is not a time is shown as it is');
  const day = String(
    new Formatter('de-DE', () => new Date('2026-11-27T10:00:00Z')).day('2026-11-27'),
  );
  t.match(day, /\s*>27\.11\.2026<\/time/);
});

t.test('the pages show prices and times as people read them', async (t) => {
  const clock = clockAt('2026-11-27T10:00:00Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  for (const [id, price, currency] of [
    ['p-usd', 89.5, 'USD'],
    ['p-jpy', 1200, 'JPY'],
    ['p-eur', 89.5, 'EUR'],
  ] as const) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id, name: `Item ${id}`, price, currency }),
    });
    t.equal(res.status, 201, id);
  }
  clock.advance(300);
  const admin = await signInDashboard(s, s.keys.admin);
  const en = (await admin.get('/dashboard/products')).text;
  t.match(en, '$89.50');
  t.match(en, '¥1,200');
  t.notMatch(en, '¥1,200.', 'no decimals for JPY');
  t.match(en, '€89.50');
  t.notMatch(en, '89.5 USD', 'no raw amount');
  t.match(
    en,
    /<time datetime="2026-11-27T10:00:00.000Z" title="2026-11-27 10:00:00 UTC"\s*>5 minutes ago<\/time>/,
  );
  t.notMatch(en, />2026-11-27T10:00:00/, 'no raw ISO time as text');
  const de = spaced(
    (await admin.get('/dashboard/products', { 'accept-language': 'de-DE,de;q=0.9' })).text,
  );
  t.match(de, '89,50 €');
  t.match(de, '89,50 $');
  t.match(de, '>vor 5 Minuten</time>');
  const one = spaced(
    (await admin.get('/dashboard/products/p-eur', { 'accept-language': 'de-DE' })).text,
  );
  t.match(one, /<dd>\s*89,50 €\s*<\/dd>/);
  const keys = (await admin.get('/dashboard/settings/api-keys')).text;
  t.match(keys, /<time datetime="2026-11-27T10:00:00.000Z"/, 'key creation time');
});

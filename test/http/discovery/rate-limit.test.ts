import t from 'tap';
import { rateWindows } from '../../../src/domain/discovery/policy.js';
import { IpRateLimiter } from '../../../src/http/discovery/rate-limit.js';
import { createClock } from '../../support/pipeline.js';

const DEFAULTS = rateWindows({ minute: 60, hour: 1000, day: 10_000 });

t.test(
  '1,000 requests an hour pass at 60 a minute, the 1,001st waits for the next hour',
  async (t) => {
    const clock = createClock('2026-11-21T10:00:00.000Z');
    const limiter = new IpRateLimiter(DEFAULTS, () => clock.now().getTime());
    let allowed = 0;
    for (let minute = 0; minute < 17 && allowed < 1000; minute++) {
      for (let i = 0; i < 60 && allowed < 1000; i++) {
        const d = limiter.hit('203.0.113.9');
        t.ok(d.allowed);
        allowed++;
        if (allowed === 1000) t.equal(d.remaining, 0, 'the hour is the fullest window');
      }
      clock.advance(60);
    }
    const refused = limiter.hit('203.0.113.9');
    t.match(refused, { allowed: false, remaining: 0, window: { name: 'hour' } });
    t.equal(refused.retryAfter, 43 * 60, 'until 11:00');
    t.ok(limiter.hit('198.51.100.7').allowed, 'other addresses have their own budget');
    clock.set('2026-11-21T11:00:00.000Z');
    t.match(limiter.hit('203.0.113.9'), { allowed: true, remaining: 59 });
  },
);

t.test('10,000 requests a day, then nothing until midnight UTC', async (t) => {
  const clock = createClock('2026-11-21T00:00:00.000Z');
  const limiter = new IpRateLimiter(DEFAULTS, () => clock.now().getTime());
  let allowed = 0;
  while (allowed < 10_000) {
    const d = limiter.hit('203.0.113.9');
    if (d.allowed) allowed++;
    else clock.advance(d.retryAfter);
  }
  // Each hour gives 1,000 (16 full minutes and 40 more): the 10,000th comes at 09:16.
  t.equal(clock.now().toISOString(), '2026-11-21T09:16:00.000Z', 'the hour limit paced it');
  const refused = limiter.hit('203.0.113.9');
  t.match(refused, { allowed: false, window: { name: 'day' }, retryAfter: 14 * 3600 + 44 * 60 });
});

t.test('refused requests are not counted, and idle addresses are forgotten', async (t) => {
  const clock = createClock('2026-11-21T10:00:30.000Z');
  const limiter = new IpRateLimiter(rateWindows({ minute: 2, hour: 0, day: 0 }), () =>
    clock.now().getTime(),
  );
  t.ok(limiter.hit('a').allowed);
  t.ok(limiter.hit('a').allowed);
  for (let i = 0; i < 5; i++) t.equal(limiter.hit('a').retryAfter, 30);
  clock.advance(30);
  t.match(limiter.hit('a'), { allowed: true, remaining: 1 });
  t.equal(limiter.prune(), 0, 'a live window is kept');
  clock.advance(60);
  t.equal(limiter.prune(), 1);
  t.equal(limiter.size, 0);
});

t.test('with every window switched off, nothing is limited or reported', async (t) => {
  const limiter = new IpRateLimiter(rateWindows({ minute: 0, hour: 0, day: 0 }), () => 0);
  t.same(limiter.hit('a'), { allowed: true, remaining: null, retryAfter: 0 });
});

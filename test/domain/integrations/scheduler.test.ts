import t from 'tap';
import { pino } from 'pino';
import { startTestServer } from '../../support/server.js';
import { startFeedServer } from '../../support/feed-server.js';
import { clockAt } from '../../support/clock.js';
import { feedProduct, jsonl } from '../../support/integrations.js';
import { startSyncScheduler } from '../../../src/domain/integrations/scheduler.js';
import { shareOf } from '../../../src/domain/workers/registry.js';

t.test(
  'SYNC_CRON: syncs start when the clock reaches a match, once, and skip paused ones',
  async (t) => {
    const clock = clockAt('2026-11-25T10:00:30.000Z');
    const feeds = await startFeedServer(t);
    feeds.set('/a.jsonl', jsonl([feedProduct('A')]));
    feeds.hang('/slow.jsonl');
    const server = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' }, { now: clock.now });
    const create = async (url: string) =>
      (
        await server.request('POST', '/v1/integrations', {
          body: { platform: 'feed', settings: { url } },
        })
      ).body.id as string;
    const a = await create(feeds.url('/a.jsonl'));
    const slow = await create(feeds.url('/slow.jsonl'));
    const paused = await create(feeds.url('/a.jsonl'));
    await server.request('PUT', `/v1/integrations/${paused}`, { body: { status: 'disconnected' } });

    const runner = server.server.deps.integrations!;
    const scheduler = startSyncScheduler({
      runner,
      cron: '0 * * * *',
      logger: pino({ level: 'silent' }),
      now: clock.now,
      intervalMs: 0,
    });
    t.teardown(() => scheduler.stop());

    t.same(await scheduler.tick(), [], 'no match yet');
    clock.set('2026-11-25T10:59:59.000Z');
    t.same(await scheduler.tick(), []);
    clock.set('2026-11-25T11:00:00.000Z');
    const started = await scheduler.tick();
    t.equal(started.length, 2, 'the two connected integrations, not the paused one');
    t.same(await scheduler.tick(), [], 'one start per match');
    const runA = (await server.request('GET', `/v1/integrations/${a}/sync/status`)).body;
    t.equal(runA.current?.trigger ?? runA.last?.trigger, 'schedule');
    await runner.settled(runA.current?.id ?? runA.last.id);

    // Past a match the scheduler did not look at (a busy second): it still fires, once.
    clock.set('2026-11-25T12:00:03.000Z');
    const next = await scheduler.tick();
    t.equal(next.length, 1, 'the hung sync is still running: only the other one starts');
    const status = (await server.request('GET', `/v1/integrations/${slow}/sync/status`)).body;
    t.equal(status.status, 'running');
    await runner.settled(next[0]!);
    const history = (await server.request('GET', `/v1/integrations/${a}/sync/history`)).body;
    t.same(
      history.syncs.map((s: any) => [s.trigger, s.status]),
      [
        ['schedule', 'succeeded'],
        ['schedule', 'succeeded'],
      ],
    );
  },
);

t.test(
  'with several processes, each starts the syncs of its share of the integrations',
  async (t) => {
    const clock = clockAt('2026-11-25T10:59:59.000Z');
    const feeds = await startFeedServer(t);
    feeds.set('/a.jsonl', jsonl([feedProduct('A')]));
    const server = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' }, { now: clock.now });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url('/a.jsonl') } },
      });
      ids.push(res.body.id as string);
    }
    const runner = server.server.deps.integrations!;
    // Two workers, as two serve processes' registries would share (each its own scheduler).
    const members = ['host/1/aaaaaaaaaa', 'host/2/bbbbbbbbbb'];
    const shares = members.map((self) => ({
      share: (keys: readonly string[]) => shareOf(keys, members, self),
    }));
    const schedulers = shares.map((workers) =>
      startSyncScheduler({
        runner,
        cron: '0 * * * *',
        logger: pino({ level: 'silent' }),
        now: clock.now,
        intervalMs: 0,
        workers,
      }),
    );
    t.teardown(() => Promise.all(schedulers.map((s) => s.stop())));
    clock.set('2026-11-25T11:00:00.000Z');
    const started = await Promise.all(schedulers.map((s) => s.tick()));
    t.same(
      started.map((runs) => runs.length),
      [2, 2],
      'two syncs started by each',
    );
    for (const run of started.flat()) await runner.settled(run);
    for (const id of ids) {
      const history = (await server.request('GET', `/v1/integrations/${id}/sync/history`)).body;
      t.same(
        history.syncs.map((s: any) => [s.trigger, s.status]),
        [['schedule', 'succeeded']],
        `${id}: synced once`,
      );
    }
  },
);

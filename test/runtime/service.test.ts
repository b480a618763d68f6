import t from 'tap';
import { inParallel, service, Services, type Service } from '../../src/runtime/service.js';

/** A log that keeps what it was told. */
function recordingLog() {
  const lines: { err: unknown; message: string }[] = [];
  return {
    lines,
    error: (data: { err: unknown }, message: string) => lines.push({ ...data, message }),
  };
}

/** A service that writes its start and stop into `events`; `fail` makes that step throw. */
function part(name: string, events: string[], fail: { start?: boolean; stop?: boolean } = {}) {
  return service(name, {
    start: async () => {
      events.push(`start ${name}`);
      if (fail.start) throw new Error(`${name} would not start`);
    },
    stop: async () => {
      events.push(`stop ${name}`);
      if (fail.stop) throw new Error(`${name} would not stop`);
    },
  });
}

t.test('starts in order and stops in reverse', async (t) => {
  const events: string[] = [];
  const log = recordingLog();
  const services = new Services([part('a', events), part('b', events), part('c', events)], log);
  await services.start();
  t.same(events, ['start a', 'start b', 'start c']);
  await services.stop();
  t.same(events.slice(3), ['stop c', 'stop b', 'stop a']);
  t.same(log.lines, []);
  t.equal(services.stop(), services.stop(), 'stop runs once');
});

t.test(
  'every stop runs whatever failed; each failure logged by name; the first thrown',
  async (t) => {
    const events: string[] = [];
    const log = recordingLog();
    const services = new Services(
      [
        part('the store', events),
        part('the audit log', events, { stop: true }),
        part('the HTTP server', events, { stop: true }),
      ],
      log,
    );
    await services.start();
    const err = await services.stop().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    t.same(events.slice(3), ['stop the HTTP server', 'stop the audit log', 'stop the store']);
    t.match(
      err?.message,
      /^shutdown: the HTTP server failed: Error: the HTTP server would not stop/,
    );
    t.match((err?.cause as Error).message, 'the HTTP server would not stop');
    t.same(
      log.lines.map((l) => l.message),
      ['shutdown: the HTTP server failed', 'shutdown: the audit log failed'],
    );
  },
);

t.test('a failed start stops what had started, in reverse, and throws its error', async (t) => {
  const events: string[] = [];
  const services = new Services(
    [part('a', events), part('b', events), part('c', events, { start: true }), part('d', events)],
    recordingLog(),
  );
  await t.rejects(services.start(), /c would not start/);
  t.same(events, ['start a', 'start b', 'start c', 'stop b', 'stop a']);
});

t.test('a parallel group starts in order and stops its members together', async (t) => {
  const events: string[] = [];
  const log = recordingLog();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  // The first member's stop ends only once the second has started stopping.
  const slow: Service = {
    name: 'slow',
    start: async () => void events.push('start slow'),
    stop: async () => {
      events.push('stop slow');
      await released;
      events.push('slow stopped');
    },
  };
  const other: Service = {
    name: 'other',
    start: async () => void events.push('start other'),
    stop: async () => {
      events.push('stop other');
      release();
      throw new Error('other failed');
    },
  };
  const services = new Services(
    [part('store', events), inParallel('serving', [slow, other]), part('admission', events)],
    log,
  );
  await services.start();
  t.same(events, ['start store', 'start slow', 'start other', 'start admission']);
  await t.rejects(services.stop(), /shutdown: other failed/);
  t.same(events.slice(4), [
    'stop admission',
    'stop slow',
    'stop other',
    'slow stopped',
    'stop store',
  ]);
  t.same(
    log.lines.map((l) => l.message),
    ['shutdown: other failed'],
  );
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import t from 'tap';
import { ERROR_STATUS } from '../../src/error-status.js';
import { AppError, type ErrorKind } from '../../src/errors.js';
import { writeError } from '../../src/http/error-handler.js';
import { dashboardErrorOf } from '../../src/dashboard/error-page.js';
import { startTestServer } from '../support/server.js';
import { signInDashboard } from '../support/dashboard.js';
import { createFeed } from '../support/feeds.js';

const KINDS = Object.keys(ERROR_STATUS) as ErrorKind[];

/** The API's answer to a thrown AppError, written by its real error handler over HTTP. */
async function apiAnswer(kind: ErrorKind): Promise<{ status: number; code: string }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.state = { requestId: 'req_test', envelope: false };
    writeError(ctx, new AppError(kind, `a ${kind} error`), pino({ level: 'silent' }));
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const body = (await res.json()) as { error: { code: string } };
    return { status: res.status, code: body.error.code };
  } finally {
    server.close();
  }
}

t.test('every error kind: the dashboard gives the status and code the API gives', async (t) => {
  for (const kind of KINDS) {
    const api = await apiAnswer(kind);
    const dash = dashboardErrorOf(new AppError(kind, `a ${kind} error`));
    t.same({ status: dash.status, code: dash.code }, api, kind);
  }
  // The kinds the dashboard once turned into 400.
  const expected: [ErrorKind, number][] = [
    ['internal', 500],
    ['upstream', 502],
    ['timeout', 504],
    ['burst_limited', 429],
    ['quota_exceeded', 429],
    ['invalid_field', 422],
    ['payload_too_large', 413],
  ];
  for (const [kind, status] of expected) {
    t.equal(dashboardErrorOf(new AppError(kind, 'x')).status, status, kind);
  }
  t.equal(dashboardErrorOf(new AppError('upstream', 'x')).code, 'upstream_error');
  t.equal(
    dashboardErrorOf(new AppError('internal', 'secret detail')).message,
    'Something went wrong; see the server log.',
    "an internal error's own words stay out of the page, as in the API",
  );
});

t.test('the same bad input gives the same status on the API and on a dashboard page', async (t) => {
  const s = await startTestServer(t);
  const feed = await createFeed(s, { name: 'Main', format: 'json' });
  const api = await s.request('PUT', `/v1/feeds/${feed.id}`, { body: { status: 'bogus' } });
  t.equal(api.status, 422);
  const admin = await signInDashboard(s, s.keys.admin);
  const page = await admin.post(`/dashboard/feeds/${feed.id}/status`, { status: 'bogus' });
  t.equal(page.status, api.status, 'the page has the API status (it was 400)');
  t.match(page.text, `data-code="${api.body.error.code}"`, 'and shows the API code');
  t.match(page.text, 'role="alert"');
});

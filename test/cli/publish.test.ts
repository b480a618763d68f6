import t from 'tap';
import { signInDashboard } from '../support/dashboard.js';
import { cliEnv, runCli } from '../support/feeds.js';
import { s3Env, startS3 } from '../support/s3.js';
import { productBody, startTestServer } from '../support/server.js';

t.test(
  'agentshelf publish: dry run, upload, nothing changed, a failure on /v1/publications',
  async (t) => {
    const fake = await startS3(t);
    const s = await startTestServer(t, s3Env(fake));
    await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
    const env = cliEnv(s, s3Env(fake));

    // The tree on disk only: build without a target.
    t.equal((await runCli(['build'], { ...env, PUBLISH_TARGET: '' })).code, 0);
    t.same(fake.requests, [], 'build without PUBLISH_TARGET writes no bucket');

    const dry = await runCli(['publish', '--dry-run', '--json'], env);
    t.equal(dry.code, 0, dry.stderr);
    const plan = JSON.parse(dry.stdout);
    t.equal(plan.dry_run, true);
    t.ok(plan.changed.includes('v1/index.json'));
    t.equal(plan.changed.at(-1), 'index.html');
    t.same(
      fake.requests.filter((r) => r.method !== 'GET'),
      [],
      'a dry run writes nothing',
    );

    const real = await runCli(['publish', '--json'], env);
    t.equal(real.code, 0, real.stderr);
    const done = JSON.parse(real.stdout);
    t.equal(done.uploaded, plan.changed.length);
    t.same(done.changed, plan.changed);

    const again = await runCli(['publish'], env);
    t.equal(again.code, 0);
    t.match(
      again.stdout,
      /^publish: s3:\/\/shelf\/registry\/ at http:\/\/127\.0\.0\.1:\d+: uploaded 0 objects/,
    );

    const wrong = await runCli(['publish'], { ...env, AWS_SECRET_ACCESS_KEY: 'not-the-secret-42' });
    t.equal(wrong.code, 1);
    t.match(
      wrong.stderr,
      /^agentshelf publish: failed: .*SignatureDoesNotMatch.*AWS_SECRET_ACCESS_KEY[^\n]*\n$/,
    );

    const list = await s.request('GET', '/v1/publications');
    t.equal(list.status, 200);
    t.same(
      list.body.publications.map((p: { status: string; trigger: string }) => [p.status, p.trigger]),
      [
        ['failed', 'publish'],
        ['succeeded', 'publish'],
        ['succeeded', 'publish'],
      ],
      'newest first; the dry run is not a publication',
    );
    t.match(list.body.publications[0].error, /SignatureDoesNotMatch/);
    t.equal(list.body.publications[1].uploaded, 0);
    t.equal(list.body.publications[2].uploaded, plan.changed.length);
    t.notMatch(list.text, /not-the-secret-42|S3RVER/, 'no credential in the answer');
    const failed = await s.request('GET', '/v1/publications?status=failed');
    t.equal(failed.body.pagination.total, 1);

    // The dashboard's discovery page shows the same.
    const dash = await signInDashboard(s, s.keys.read_only);
    const page = await dash.get('/dashboard/discovery');
    t.equal(page.status, 200);
    t.match(page.text, /Publications to object storage[\s\S]*failed[\s\S]*SignatureDoesNotMatch/);
    t.match(page.text, /1–3 of 3/);
    const succeeded = await dash.get('/dashboard/discovery?publications_status=succeeded');
    t.match(succeeded.text, /1–2 of 2/, 'filtered by state');
    t.notMatch(succeeded.text, 'SignatureDoesNotMatch');
    t.match(succeeded.text, '<option selected value="succeeded">succeeded</option>');
    const wrongState = await dash.get('/dashboard/discovery?publications_status=lost');
    t.equal(wrongState.status, 400, 'an unknown state is refused as the API refuses it');
    t.match(wrongState.text, /data-code="[a-z_]+"[^>]*>[^<]*status/, 'naming the field');
    t.match(page.text, `href="${s.config.FEEDS_URL}/.well-known/ucp"`, 'the UCP profile');
  },
);

t.test('agentshelf publish: --help, and no target is a usage error', async (t) => {
  const help = await runCli(['publish', '--help'], { PATH: process.env.PATH ?? '' });
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: agentshelf publish \[--dry-run\] \[--force\]/);
  const s = await startTestServer(t);
  const none = await runCli(['publish'], cliEnv(s));
  t.equal(none.code, 2);
  t.match(none.stderr, /PUBLISH_TARGET is not set/);
});

import t from 'tap';
import { signatureHeaders } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import {
  createWebBotAuthVerifier,
  DIRECTORY_PATH,
  type SignedRequest,
} from '../../../src/domain/analytics/web-bot-auth.js';
import { startReceiver } from '../../support/receiver.js';

// RFC 9421 Appendix B.1.4's Ed25519 test key (public test vector, not a secret).
const PRIVATE = {
  kty: 'OKP',
  crv: 'Ed25519',
  kid: 'test-key-ed25519',
  d: 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU',
  x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
};
const PUBLIC = { kty: 'OKP', crv: 'Ed25519', x: PRIVATE.x };
// Another Ed25519 public key (RFC 8037 Appendix A), whose private half the test does not have.
const OTHER = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };

/** A request to the discovery host signed as an agent whose keys live at `agentOrigin`. */
async function signed(agentOrigin: string | null, path = '/v1/index.json'): Promise<SignedRequest> {
  const headers: Record<string, string> = { host: 'feeds.example.com' };
  if (agentOrigin) headers['signature-agent'] = `"${agentOrigin}"`;
  const now = new Date();
  const sig = await signatureHeaders(
    new Request(`https://feeds.example.com${path}`, { headers }),
    await signerFromJWK(PRIVATE),
    { created: now, expires: new Date(now.getTime() + 300_000) },
  );
  return {
    method: 'GET',
    url: path,
    protocol: 'https',
    headers: { ...headers, signature: sig.Signature, 'signature-input': sig['Signature-Input'] },
  };
}

t.test(
  'a signature by a key the agent publishes verifies; the directory is fetched once',
  async (t) => {
    const dir = await startReceiver(t, () => ({
      status: 200,
      headers: { 'content-type': 'application/http-message-signatures-directory+json' },
      body: JSON.stringify({ keys: [OTHER, PUBLIC] }),
    }));
    const origin = `http://127.0.0.1:${dir.port}`;
    const verifier = createWebBotAuthVerifier({ allowPrivate: true });
    const first = await verifier.verify(await signed(origin));
    t.equal(first.verified, true, first.reason ?? 'verified');
    t.match(first.keyid, /^[A-Za-z0-9_-]{43}$/);
    t.equal((await verifier.verify(await signed(origin, '/v1/brands/acme'))).verified, true);
    t.equal(dir.requests.length, 1);
    t.equal(dir.requests[0]!.path, DIRECTORY_PATH);
  },
);

t.test('what does not verify says why', async (t) => {
  const dir = await startReceiver(t, () => ({
    status: 200,
    body: JSON.stringify({ keys: [OTHER] }),
  }));
  const origin = `http://127.0.0.1:${dir.port}`;
  const verifier = createWebBotAuthVerifier({ allowPrivate: true });

  const unknownKey = await verifier.verify(await signed(origin));
  t.same(unknownKey, { verified: false, reason: 'the directory does not publish this key' });

  const trusting = createWebBotAuthVerifier({ keys: [PUBLIC], http: null });
  const good = await signed(origin);
  t.equal((await trusting.verify(good)).verified, true, 'a configured key needs no fetch');

  // The request was changed after signing: another host (the signed @authority).
  const moved = { ...good, headers: { ...good.headers, host: 'evil.example' } };
  const r1 = await trusting.verify(moved);
  t.equal(r1.verified, false);
  t.match(r1.reason, /signature does not hold/);

  // Signature-Agent swapped for another origin: the signature covered it.
  const swapped = {
    ...good,
    headers: { ...good.headers, 'signature-agent': '"https://x.example"' },
  };
  t.equal((await trusting.verify(swapped)).verified, false);

  t.same(await trusting.verify({ method: 'GET', url: '/', headers: {} }), {
    verified: false,
    reason: 'not signed',
  });

  const down = createWebBotAuthVerifier({ allowPrivate: true, timeoutMs: 2000 });
  const gone = await startReceiver(t, () => ({ status: 404, body: 'no' }));
  const r2 = await down.verify(await signed(`http://127.0.0.1:${gone.port}`));
  t.same(r2, { verified: false, reason: 'directory answered HTTP 404' });
  await down.verify(await signed(`http://127.0.0.1:${gone.port}`));
  t.equal(gone.requests.length, 1, 'a failure is remembered too');

  // Without allowPrivate, a directory on a private address is refused by the SSRF guard.
  const guarded = createWebBotAuthVerifier({});
  const r3 = await guarded.verify(await signed(`https://127.0.0.1:${dir.port}`));
  t.equal(r3.verified, false);
  t.match(r3.reason, /directory could not be fetched/);
});

/**
 * A browsing agent that signs its requests (Web Bot Auth) is recorded by the discovery server
 * as kind `agent`, verified when its signature holds for a key its Signature-Agent publishes.
 */
import t from 'tap';
import { signatureHeaders } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import { startReceiver } from '../../support/receiver.js';
import { startTestServer } from '../../support/server.js';

// RFC 9421 Appendix B.1.4's Ed25519 test key (a public test vector, not a secret).
const PRIVATE = {
  kty: 'OKP',
  crv: 'Ed25519',
  d: 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU',
  x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
};
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

t.test('signed, unsigned and tampered Signature-Agent requests', async (t) => {
  const directory = await startReceiver(t, () => ({
    status: 200,
    headers: { 'content-type': 'application/http-message-signatures-directory+json' },
    body: JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: PRIVATE.x }] }),
  }));
  const agent = `http://127.0.0.1:${directory.port}`;
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  const feeds = s.server.discovery.url;

  const signed = async (headers: Record<string, string>) => {
    const now = new Date();
    const sig = await signatureHeaders(
      new Request(`${feeds}/v1/index.json`, { headers }),
      await signerFromJWK(PRIVATE),
      { created: now, expires: new Date(now.getTime() + 300_000) },
    );
    return { ...headers, signature: sig.Signature, 'signature-input': sig['Signature-Input'] };
  };
  const base = { 'user-agent': CHROME, 'signature-agent': `"${agent}"` };
  const good = await signed(base);
  await (await fetch(`${feeds}/v1/index.json`, { headers: good })).text();
  await (await fetch(`${feeds}/v1/index.json`, { headers: base })).text();
  // Signed for another Signature-Agent, sent with ours: the signature covers the header.
  const other = await signed({ ...base, 'signature-agent': '"https://elsewhere.example"' });
  await (
    await fetch(`${feeds}/v1/index.json`, {
      headers: { ...other, 'signature-agent': base['signature-agent'] },
    })
  ).text();
  await s.server.discovery.flushRequests();

  const rows = await s.server.store.db
    .selectFrom('interactions')
    .select(['agent', 'kind', 'verified', 'user_agent'])
    .orderBy('id')
    .execute();
  t.equal(rows.length, 3);
  const verified = rows.filter((r) => r.verified === 1);
  t.same(verified, [
    { agent: `127.0.0.1:${directory.port}`, kind: 'agent', verified: 1, user_agent: CHROME },
  ]);
  t.equal(rows.filter((r) => r.kind === 'agent' && r.verified === 0).length, 2);
  t.equal(directory.requests.length, 1, 'the key directory is fetched once');
  t.equal(directory.requests[0]!.path, '/.well-known/http-message-signatures-directory');
});

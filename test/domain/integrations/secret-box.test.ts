// stores: none — DATA_DIR holds the secret key file here; no store is opened
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  SecretBox,
  SecretKeyError,
  decryptWith,
  deriveKey,
} from '../../../src/domain/integrations/secret-box.js';

t.test('AES-256-GCM round trip; a fresh nonce each time; tampering is detected', async (t) => {
  const box = new SecretBox({ SECRET_KEY: 'k'.repeat(40), DATA_DIR: t.testdir({}) });
  const a = box.encrypt('{"access_token":"shpat_x"}');
  const b = box.encrypt('{"access_token":"shpat_x"}');
  t.not(a, b, 'two encryptions differ');
  t.equal(box.decrypt(a), '{"access_token":"shpat_x"}');
  const sealed = Buffer.from(a.split('.')[2]!, 'base64');
  sealed[sealed.length - 1]! ^= 1;
  const tampered = `${a.split('.').slice(0, 2).join('.')}.${sealed.toString('base64')}`;
  t.throws(() => box.decrypt(tampered), SecretKeyError);
  const other = new SecretBox({ SECRET_KEY: 'o'.repeat(40), DATA_DIR: t.testdir({}) });
  t.throws(() => other.decrypt(a), /OLD_SECRET_KEY/);
  t.throws(() => decryptWith(deriveKey('o'.repeat(40), 'x'), a), SecretKeyError);
});

t.test('without SECRET_KEY: a key file, mode 0600, made on first use and reused', async (t) => {
  const dir = path.join(t.testdir({}), 'data');
  const box = new SecretBox({ DATA_DIR: dir });
  t.notOk(fs.existsSync(path.join(dir, 'secret.key')));
  const value = box.encrypt('x');
  const stat = fs.statSync(path.join(dir, 'secret.key'));
  t.equal(stat.mode & 0o777, 0o600);
  t.equal(new SecretBox({ DATA_DIR: dir }).decrypt(value), 'x', 'another process reads it');
});

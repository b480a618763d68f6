import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Integration credentials at rest: AES-256-GCM with a 96-bit random nonce per value. The key
 * is derived (HKDF-SHA256) from SECRET_KEY, or, when SECRET_KEY is unset, from 32 random bytes
 * kept in DATA_DIR/secret.key (mode 0600, created on first use). A ciphertext names the key
 * it was made with (the first 8 hex digits of a hash of the key), so a rotation
 * (`agentshelf integrations rotate-key`) knows which values it still has to re-encrypt and
 * the server keeps reading old values (OLD_SECRET_KEY) until it has.
 *
 * Stored form: `v1.<key id>.<base64 of nonce | tag | ciphertext>`.
 */

export const KEY_FILE_NAME = 'secret.key';
/** The key file before a rotation, kept until every value is re-encrypted. */
export const OLD_KEY_FILE_NAME = 'secret.key.old';
const INFO = 'agentshelf integration credentials v1';

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

export interface SecretKey {
  id: string;
  key: Buffer;
  /** Where it came from, for messages: `SECRET_KEY`, `OLD_SECRET_KEY` or the key file. */
  source: string;
}

/** The AES key of a secret (the text of SECRET_KEY, or the key file's content). */
export function deriveKey(secret: string, source: string): SecretKey {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO, 32));
  const id = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return { id, key, source };
}

/** The key file's path. */
export function keyFilePath(dataDir: string): string {
  return path.join(dataDir, KEY_FILE_NAME);
}

/** The key file's key, or undefined when there is no key file. */
export function readKeyFile(dataDir: string, name = KEY_FILE_NAME): SecretKey | undefined {
  const file = path.join(dataDir, name);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (text.length < 32) throw new SecretKeyError(`${file} holds no usable key`);
  return deriveKey(text, file);
}

/** Writes a new random key file (exclusively: an existing file is never overwritten). */
export function createKeyFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  // The umask may have taken bits off, never added: make it exactly 0600.
  fs.chmodSync(file, 0o600);
}

export interface KeySettings {
  SECRET_KEY?: string | undefined;
  OLD_SECRET_KEY?: string | undefined;
  DATA_DIR: string;
}

/**
 * Encrypts with the current key and decrypts with any key it knows. The key file is read or
 * created only when first needed, so a store without integrations never gets one.
 */
export class SecretBox {
  private current: SecretKey | undefined;
  private readonly extra: SecretKey[];

  constructor(private readonly settings: KeySettings) {
    this.extra = settings.OLD_SECRET_KEY
      ? [deriveKey(settings.OLD_SECRET_KEY, 'OLD_SECRET_KEY')]
      : [];
  }

  /** The key new values are encrypted with. */
  currentKey(): SecretKey {
    if (this.current) return this.current;
    if (this.settings.SECRET_KEY) {
      this.current = deriveKey(this.settings.SECRET_KEY, 'SECRET_KEY');
      return this.current;
    }
    let key = readKeyFile(this.settings.DATA_DIR);
    if (!key) {
      try {
        createKeyFile(keyFilePath(this.settings.DATA_DIR));
      } catch (err) {
        // Another process created it first: read theirs.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      key = readKeyFile(this.settings.DATA_DIR)!;
    }
    this.current = key;
    return key;
  }

  /** Keys that can still decrypt: the current one, OLD_SECRET_KEY, and the key file. */
  private keys(): SecretKey[] {
    const keys = [this.currentKey(), ...this.extra];
    if (this.settings.SECRET_KEY) {
      const file = readKeyFile(this.settings.DATA_DIR);
      if (file) keys.push(file);
    }
    const old = readKeyFile(this.settings.DATA_DIR, OLD_KEY_FILE_NAME);
    if (old) keys.push(old);
    return keys;
  }

  encrypt(plain: string): string {
    return encryptWith(this.currentKey(), plain);
  }

  decrypt(stored: string): string {
    const id = keyIdOf(stored);
    const key = this.keys().find((k) => k.id === id);
    if (!key) {
      throw new SecretKeyError(
        'credentials were encrypted with a key this process does not have (set SECRET_KEY to the key in use, or OLD_SECRET_KEY to the previous one and run `agentshelf integrations rotate-key`)',
      );
    }
    return decryptWith(key, stored);
  }

  /** Whether a stored value is encrypted with the current key. */
  isCurrent(stored: string): boolean {
    return keyIdOf(stored) === this.currentKey().id;
  }
}

export function keyIdOf(stored: string): string {
  const [version, id] = stored.split('.', 2);
  if (version !== 'v1' || !id) throw new SecretKeyError('not an encrypted value');
  return id;
}

export function encryptWith(key: SecretKey, plain: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, nonce);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const sealed = Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64');
  return `v1.${key.id}.${sealed}`;
}

export function decryptWith(key: SecretKey, stored: string): string {
  const sealed = Buffer.from(stored.slice(stored.lastIndexOf('.') + 1), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key.key, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError(`credentials do not decrypt with ${key.source}`);
  }
}

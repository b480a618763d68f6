/**
 * The `sftp` delivery (CONTRACT part 10): the feed's file uploaded to an SFTP server (OpenAI's
 * file upload takes feeds this way) under a temporary name in the target's folder, then
 * renamed over the target, so a reader of the folder never meets half a file. The server's
 * host key is pinned as OpenSSH prints it (`SHA256:<base64>`): another key ends the
 * connection before authentication, and nothing is sent. The connection goes through the
 * outbound-address guard, as webhooks do.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import type { Client, SFTPWrapper } from 'ssh2';
import type { DeliveryTransport } from '../domain/feeds/deliveries.js';
import { checkAddress, guardedLookup } from '../net/target-guard.js';

/** How long connecting and authenticating may take. */
const READY_TIMEOUT_MS = 15_000;

/** A host key as OpenSSH fingerprints it: SHA256 of the key blob, base64 without padding. */
export function openSshFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

function call<T>(run: (done: (err: Error | null | undefined, value?: T) => void) => void) {
  return new Promise<T>((resolve, reject) =>
    run((err, value) => (err ? reject(err) : resolve(value as T))),
  );
}

/** Connects (guarded), checks the host key, authenticates; resolves with the ready client. */
async function connect(request: Parameters<DeliveryTransport>[0]): Promise<Client> {
  const { delivery, credentials, allowPrivate } = request;
  if (delivery.type !== 'sftp') throw new Error('not an sftp delivery');
  checkAddress(delivery.host, { allowPrivate });
  // Loaded on the first SFTP delivery, before the socket exists (no error event unheard):
  // ssh2 (21 modules and a native addon) is a tenth of a second of every process's start
  // otherwise, and most never deliver by SFTP.
  const { default: ssh2 } = await import('ssh2');
  // noDelay: ssh2 writes whole packets; with Nagle on, each small handshake and SFTP
  // request after the first waited out the server's delayed ACK (40 ms on Linux): 0.25 s of
  // every delivery, measured on loopback against OpenSSH (the channels benchmark).
  const sock = net.connect({
    host: delivery.host,
    port: delivery.port,
    lookup: guardedLookup({ allowPrivate }),
    noDelay: true,
  });
  const client = new ssh2.Client();
  let presented: string | undefined;
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    client.once('ready', () => resolve());
    // on, not once: the client may report a second error (the socket closing after the first).
    client.on('error', (err) =>
      reject(
        presented !== undefined && presented !== delivery.host_key_sha256
          ? new Error(
              `the server's host key is ${presented}, not the pinned ${delivery.host_key_sha256}: nothing was sent`,
            )
          : err,
      ),
    );
    client.connect({
      sock,
      username: delivery.username,
      ...(credentials.password !== undefined ? { password: credentials.password } : {}),
      ...(credentials.private_key !== undefined ? { privateKey: credentials.private_key } : {}),
      readyTimeout: READY_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => {
        presented = openSshFingerprint(key);
        return presented === delivery.host_key_sha256;
      },
    });
  });
  return client;
}

/** Uploads to `.name.tmp-<random>` beside the target, then renames it over the target. */
async function upload(
  sftp: SFTPWrapper,
  request: Parameters<DeliveryTransport>[0],
  target: string,
): Promise<{ temporary: string }> {
  const temporary = path.posix.join(
    path.posix.dirname(target),
    `.${path.posix.basename(target)}.tmp-${randomBytes(6).toString('hex')}`,
  );
  try {
    await call<void>((done) =>
      sftp.fastPut(
        request.file,
        temporary,
        {
          step: (sent: number, _chunk: number, total: number) => request.onProgress?.(sent, total),
        },
        (err) => done(err),
      ),
    );
    // OpenSSH's posix-rename replaces the target in one step; plain SFTP rename refuses to.
    await call<void>((done) => sftp.ext_openssh_rename(temporary, target, (err) => done(err)));
  } catch (err) {
    await call<void>((done) => sftp.unlink(temporary, () => done(null))).catch(() => undefined);
    throw err;
  }
  return { temporary };
}

export const sendBySftp: DeliveryTransport = async (request) => {
  const delivery = request.delivery;
  if (delivery.type !== 'sftp') throw new Error('not an sftp delivery');
  const client = await connect(request);
  try {
    const sftp = await call<SFTPWrapper>((done) => client.sftp((err, s) => done(err, s)));
    await upload(sftp, request, delivery.path);
    const stats = await call<{ size: number }>((done) =>
      sftp.stat(delivery.path, (err, s) => done(err, s)),
    );
    if (stats.size !== request.bytes) {
      throw new Error(
        `the server holds ${stats.size} bytes at ${delivery.path}, not ${request.bytes}`,
      );
    }
    return {
      host: delivery.host,
      port: delivery.port,
      path: delivery.path,
      bytes: stats.size,
      host_key_sha256: delivery.host_key_sha256,
    };
  } finally {
    client.end();
  }
};

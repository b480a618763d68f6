import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, as received. */
  body: string;
  /** Date.now() when the body was complete. */
  at: number;
}

/** How the receiver answers: a status (with headers, body), or never ('hang'). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export type Responder = (req: ReceivedRequest, index: number) => Answer;

export interface Receiver {
  /** http://127.0.0.1:<port>/hook */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer; change it at any time. Default: 200 "ok". */
  respond: Responder;
  /** Resolves when `count` requests have arrived; fails the wait after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * A real webhook receiver on 127.0.0.1 and an ephemeral port, recording every request with
 * its raw body and answering as `respond` says. Closed when the test ends.
 */
export async function startReceiver(
  t: Test,
  respond: Responder = () => ({ status: 200, body: 'ok' }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(received);
      const answer = receiver.respond(received, requests.length - 1);
      for (const wake of waiters) wake();
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    respond,
    waitFor(count, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(requests.slice(0, count));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `receiver got ${requests.length} requests within ${timeoutMs} ms, wanted ${count}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  t.teardown(() => receiver.close());
  return receiver;
}

/** Polls until `check` returns a truthy value; fails after `timeoutMs` with `what`. */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Hex HMAC-SHA256 of `message` computed by openssl in a child process: an implementation
 * independent of the service's own, to check its signatures against. A string key is used
 * as its bytes; a Buffer key (the bytes of a `whsec_` secret) is passed to openssl in hex.
 */
export function opensslHmac(key: string | Buffer, message: string): Promise<string> {
  const args =
    typeof key === 'string'
      ? ['dgst', '-sha256', '-hmac', key]
      : ['dgst', '-sha256', '-mac', 'HMAC', '-macopt', `hexkey:${key.toString('hex')}`];
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', args, (err, stdout) => {
      if (err) return reject(err);
      // "HMAC-SHA2-256(stdin)= <hex>" or "(stdin)= <hex>", by openssl version.
      const hex = /([0-9a-f]{64})\s*$/.exec(stdout.trim());
      if (!hex) return reject(new Error(`unexpected openssl output: ${stdout}`));
      resolve(hex[1]!);
    });
    child.stdin!.end(message);
  });
}

/**
 * The `webhook-signature` entry of a Standard Webhooks delivery, computed by openssl:
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the secret's base64
 * bytes after `whsec_`.
 */
export async function opensslStandardSignature(
  secret: string,
  req: ReceivedRequest,
): Promise<string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const message = `${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${req.body}`;
  return `v1,${Buffer.from(await opensslHmac(key, message), 'hex').toString('base64')}`;
}

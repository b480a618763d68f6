import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The dashboard session: a cookie `<key id>.<expiry ms>.<HMAC>` signed with a key derived
 * (HKDF) from the same secret that encrypts integration credentials (SECRET_KEY or the
 * DATA_DIR key file). It carries the key's id, never the key; every request reads the key
 * row again, so a revoked key is signed out on its next request.
 */
export const SESSION_COOKIE = 'agentshelf_session';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface Session {
  keyId: string;
  expires: number;
}

export class SessionSigner {
  private key: Buffer | undefined;

  /** `secret` is read on first use (the key file is created only when a session needs it). */
  constructor(private readonly secret: () => Buffer) {}

  private mac(purpose: string, text: string): string {
    this.key ??= Buffer.from(
      hkdfSync('sha256', this.secret(), Buffer.alloc(0), 'agentshelf dashboard v1', 32),
    );
    return createHmac('sha256', this.key).update(`${purpose}\n${text}`).digest('base64url');
  }

  sign(session: Session): string {
    const body = `${session.keyId}.${session.expires}`;
    return `${body}.${this.mac('session', body)}`;
  }

  /** The session a cookie value holds, if its signature is ours and it has not expired. */
  verify(value: string | undefined, now: number): Session | undefined {
    if (!value) return undefined;
    const parts = value.split('.');
    if (parts.length !== 3) return undefined;
    const [keyId, expiresText, mac] = parts as [string, string, string];
    if (!equal(mac, this.mac('session', `${keyId}.${expiresText}`))) return undefined;
    const expires = Number(expiresText);
    if (!Number.isSafeInteger(expires) || expires <= now) return undefined;
    return { keyId, expires };
  }

  /** The CSRF token of a session: derived from the signed cookie, so it changes with it. */
  csrfToken(cookie: string): string {
    return this.mac('csrf', cookie);
  }

  checkCsrf(cookie: string, token: unknown): boolean {
    return typeof token === 'string' && equal(token, this.csrfToken(cookie));
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Failed sign-ins per client address: at most `max` in a sliding `windowMs`. */
export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly max = 10,
    private readonly windowMs = 15 * 60 * 1000,
  ) {}

  private recent(ip: string, now: number): number[] {
    const list = (this.failures.get(ip) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length === 0) this.failures.delete(ip);
    else this.failures.set(ip, list);
    return list;
  }

  /** Seconds to wait before trying again, or 0. */
  retryAfter(ip: string, now: number): number {
    const list = this.recent(ip, now);
    if (list.length < this.max) return 0;
    return Math.max(1, Math.ceil((list[0]! + this.windowMs - now) / 1000));
  }

  fail(ip: string, now: number): void {
    if (this.failures.size > 100_000) this.failures.clear();
    this.failures.set(ip, [...this.recent(ip, now), now]);
  }
}

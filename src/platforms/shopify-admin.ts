import type { HttpResponse } from '../net/http-client.js';
import { SourceError, type SourceContext } from '../domain/integrations/source.js';
import { isRecord, str } from './common.js';
import { asSourceError, assertSecureForCredentials } from './origin.js';

/**
 * The Admin GraphQL API of one shop: authentication (a fixed `shpat_` token, or the
 * client-credentials grant with a token refreshed before it expires), pacing by the
 * leaky-bucket figures Shopify returns in `extensions.cost`, THROTTLED recovery, and the
 * HTTP statuses Shopify documents (401, 402 frozen shop, 403, 404, 423 locked shop, 429, 5xx)
 * turned into SourceErrors a merchant can act on.
 */

/**
 * The newest stable quarterly version on 2026-11-25 (versions come out on the first day of
 * each quarter: 2026-10 on October 1, 2026; 2027-01 is due January 1, 2027).
 */
export const DEFAULT_SHOPIFY_API_VERSION = '2026-10';
const VERSION = /^\d{4}-(01|04|07|10)$/;

/** A token is refreshed when it has less than this left (a page or a bulk poll fits). */
const REFRESH_MARGIN_MS = 10 * 60 * 1000;
/** THROTTLED answers retried for one query before the run gives up. */
const MAX_THROTTLED = 20;

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

export interface QueryOptions {
  /** What the query is expected to cost (its requestedQueryCost), for pacing before it. */
  cost?: number;
  /** A mutation is not retried on 5xx (it may have run). */
  mutation?: boolean;
}

/**
 * The Admin API version of a run: `settings.api_version`, else the configured default
 * (SHOPIFY_API_VERSION, through the context), else DEFAULT_SHOPIFY_API_VERSION.
 */
export function shopifyApiVersion(
  settings: Readonly<Record<string, unknown>>,
  configured?: string,
): string {
  const version = settings.api_version;
  if (version === undefined || version === null || version === '')
    return configured || DEFAULT_SHOPIFY_API_VERSION;
  if (typeof version !== 'string' || !VERSION.test(version))
    throw new SourceError(
      `settings.api_version must be a Shopify version such as ${DEFAULT_SHOPIFY_API_VERSION}`,
      'invalid',
    );
  return version;
}

export class ShopifyAdmin {
  private token: string | null = null;
  private expiresAt: number | null = null;
  private bucket: (ThrottleStatus & { at: number }) | null = null;
  private readonly endpoint: string;
  /** Every wait for the bucket, in ms. */
  waitedMs = 0;
  /** The requestedQueryCost of the last answer, to pace the next query of the same shape. */
  lastRequestedCost: number | null = null;

  constructor(
    private readonly ctx: SourceContext,
    private readonly origin: string,
  ) {
    assertSecureForCredentials(origin);
    this.endpoint = `${origin}/admin/api/${shopifyApiVersion(ctx.settings, ctx.shopifyApiVersion)}/graphql.json`;
    const creds = ctx.credentials ?? {};
    if (creds.client_id && creds.client_secret) {
      // A token exchanged on an earlier run, kept with its expiry beside the client secret.
      const expires = Date.parse(creds.access_token_expires_at ?? '');
      if (creds.access_token && Number.isFinite(expires)) {
        this.token = creds.access_token;
        this.expiresAt = expires;
      }
    } else if (creds.access_token) {
      this.token = creds.access_token;
    } else {
      throw new SourceError(
        'Shopify credentials need an access_token, or a client_id and client_secret',
        'invalid',
      );
    }
  }

  private get usesGrant(): boolean {
    return Boolean(this.ctx.credentials?.client_id && this.ctx.credentials.client_secret);
  }

  /** The token to send, exchanging the client credentials when none is valid long enough. */
  private async accessToken(force = false): Promise<string> {
    if (!this.usesGrant) return this.token!;
    const now = this.ctx.now().getTime();
    if (!force && this.token && this.expiresAt !== null && this.expiresAt - now > REFRESH_MARGIN_MS)
      return this.token;
    return this.exchange();
  }

  /** POST /admin/oauth/access_token with grant_type=client_credentials. */
  private async exchange(): Promise<string> {
    const creds = this.ctx.credentials!;
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: creds.client_id!,
      client_secret: creds.client_secret!,
    }).toString();
    const res = await this.send({
      method: 'POST',
      url: `${this.origin}/admin/oauth/access_token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      retry: true,
    });
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      const answer = await res.text().catch(() => '');
      throw new SourceError(
        `Shopify refused the client credentials (${res.status}${grantError(answer)}): check the client ID and secret, and that the app is installed on this shop`,
        'auth',
      );
    }
    this.checkStatus(res);
    const json = await this.readJson(res);
    const token = isRecord(json) ? str(json.access_token) : undefined;
    const expiresIn = isRecord(json) ? Number(json.expires_in) : NaN;
    if (!token) throw new SourceError('Shopify answered the token request without a token');
    this.token = token;
    this.expiresAt = Number.isFinite(expiresIn)
      ? this.ctx.now().getTime() + expiresIn * 1000
      : this.ctx.now().getTime() + 3600 * 1000;
    await this.ctx.saveCredentials({
      ...creds, // client_id, client_secret, webhook_secret stay
      access_token: token,
      access_token_expires_at: new Date(this.expiresAt).toISOString(),
    });
    this.ctx.logger.info(
      { integration: this.ctx.integrationId, expiresAt: new Date(this.expiresAt).toISOString() },
      'shopify access token refreshed',
    );
    return token;
  }

  /** Runs a query and answers its `data`; throws SourceError when it cannot. */
  async query(
    query: string,
    variables: Record<string, unknown> = {},
    options: QueryOptions = {},
  ): Promise<Record<string, unknown>> {
    let refreshed = false;
    let cost = options.cost ?? 10;
    for (let throttled = 0; ;) {
      await this.pace(cost);
      const token = await this.accessToken();
      const res = await this.send({
        method: 'POST',
        url: this.endpoint,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'x-shopify-access-token': token,
        },
        body: JSON.stringify({ query, variables }),
        // Queries only read, so they are safe to repeat; a mutation may have run.
        retry: !options.mutation,
      });
      if (res.status === 401 && this.usesGrant && !refreshed) {
        // Revoked or expired early: one fresh token, then the answer stands.
        res.discard();
        refreshed = true;
        await this.accessToken(true);
        continue;
      }
      this.checkStatus(res);
      const json = await this.readJson(res);
      if (!isRecord(json)) throw new SourceError('Shopify answered with something not GraphQL');
      const fresh = this.readCost(json.extensions);
      const errors = Array.isArray(json.errors) ? json.errors.filter(isRecord) : [];
      if (errors.length > 0) {
        const codes = errors.map((e) => (isRecord(e.extensions) ? str(e.extensions.code) : ''));
        if (codes.includes('THROTTLED')) {
          if (++throttled > MAX_THROTTLED)
            throw new SourceError('Shopify kept throttling the requests; try again later');
          // pace() waits for the bucket before the retry, for what the query was said to
          // cost; an answer without the bucket's figures gets a growing wait instead.
          cost = Math.max(cost, this.lastRequestedCost ?? 0);
          if (!fresh) await this.wait(Math.min(60_000, 1000 * 2 ** (throttled - 1)));
          continue;
        }
        const message = errors.map((e) => str(e.message) ?? 'error').join('; ');
        if (codes.includes('ACCESS_DENIED'))
          throw new SourceError(
            `Shopify denied access (${message}): the app needs the read_products scope`,
            'auth',
          );
        if (!isRecord(json.data) || codes.includes('MAX_COST_EXCEEDED'))
          throw new SourceError(`Shopify refused the query: ${message}`, 'invalid');
        this.ctx.logger.warn({ integration: this.ctx.integrationId, message }, 'shopify errors');
      }
      if (!isRecord(json.data)) throw new SourceError('Shopify answered without data');
      return json.data;
    }
  }

  /**
   * Waits until the bucket holds `cost` points, from the last throttleStatus and the time
   * since, at restoreRate points a second (Shopify's leaky bucket).
   */
  private async pace(cost: number): Promise<void> {
    if (!this.bucket) return;
    const { maximumAvailable, currentlyAvailable, restoreRate, at } = this.bucket;
    const need = Math.min(cost, maximumAvailable);
    const elapsed = Math.max(0, this.ctx.now().getTime() - at) / 1000;
    const available = Math.min(maximumAvailable, currentlyAvailable + elapsed * restoreRate);
    if (available >= need || restoreRate <= 0) return;
    await this.wait(Math.ceil(((need - available) / restoreRate) * 1000));
  }

  private async wait(ms: number): Promise<void> {
    this.waitedMs += ms;
    try {
      await this.ctx.sleep(ms);
    } catch {
      throw new SourceError('the sync was stopped');
    }
  }

  /** Reads `extensions.cost`; true when it carried the bucket's figures. */
  private readCost(extensions: unknown): boolean {
    if (!isRecord(extensions) || !isRecord(extensions.cost)) return false;
    const requested = Number(extensions.cost.requestedQueryCost);
    if (Number.isFinite(requested)) this.lastRequestedCost = requested;
    const status = extensions.cost.throttleStatus;
    if (!isRecord(status)) return false;
    const max = Number(status.maximumAvailable);
    const available = Number(status.currentlyAvailable);
    const rate = Number(status.restoreRate);
    if (![max, available, rate].every(Number.isFinite)) return false;
    this.bucket = {
      maximumAvailable: max,
      currentlyAvailable: available,
      restoreRate: rate,
      at: this.ctx.now().getTime(),
    };
    return true;
  }

  /** Statuses Shopify documents for the Admin API, in words a merchant can act on. */
  private checkStatus(res: HttpResponse): void {
    const s = res.status;
    if (s === 200) return;
    res.discard();
    if (s === 401)
      throw new SourceError(
        'Shopify refused the access token (401): it is wrong, revoked, or the app was uninstalled',
        'auth',
      );
    if (s === 402)
      throw new SourceError(
        'the shop is frozen (402 Payment Required): Shopify serves no data until its bill is paid',
      );
    if (s === 403)
      throw new SourceError(
        'Shopify forbids this (403): the app needs the read_products scope',
        'auth',
      );
    if (s === 404)
      throw new SourceError(
        'no Shopify Admin API here (404): check the shop domain and settings.api_version',
        'invalid',
      );
    if (s === 423)
      throw new SourceError('the shop is locked (423 Locked): Shopify serves no data for it');
    if (s === 429) throw new SourceError('Shopify kept answering 429 Too Many Requests');
    if (s >= 500) throw new SourceError(`Shopify is unavailable (HTTP ${s} after retries)`);
    throw new SourceError(`Shopify answered HTTP ${s}`);
  }

  private async readJson(res: HttpResponse): Promise<unknown> {
    try {
      return await res.json();
    } catch (err) {
      throw asSourceError(err);
    }
  }

  private async send(req: Parameters<SourceContext['http']['request']>[0]): Promise<HttpResponse> {
    try {
      return await this.ctx.http.request(req);
    } catch (err) {
      throw asSourceError(err);
    }
  }
}

function grantError(body: string): string {
  try {
    const json = JSON.parse(body) as unknown;
    if (isRecord(json) && typeof json.error === 'string') return `: ${json.error.slice(0, 100)}`;
  } catch {
    // not JSON: say nothing more
  }
  return '';
}

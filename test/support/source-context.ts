import { pino } from 'pino';
import { createHttpClient } from '../../src/net/http-client.js';
import { ProductCreate } from '../../src/domain/products/schemas.js';
import type {
  IntegrationSource,
  SourceContext,
  SourceItem,
} from '../../src/domain/integrations/source.js';
import { clockAt, type TestClock } from './clock.js';

/**
 * A SourceContext for driving a platform source directly against a local platform server:
 * the real guarded HTTP client (private targets allowed), a clock the test owns, and a sleep
 * that records each wait and moves the clock by it (so a platform's bucket refills and
 * tokens expire as they would, with no real waiting).
 */
export interface SourceHarness {
  ctx: SourceContext;
  clock: TestClock;
  /** Every ctx.sleep, in ms. */
  sleeps: number[];
  /** Every wait of the HTTP client between retries, in ms. */
  retryWaits: number[];
  /** Every ctx.saveCredentials. */
  savedCredentials: Record<string, string>[];
  /** The last ctx.setState. */
  state: Record<string, unknown>;
}

export interface HarnessOptions {
  shopDomain: string;
  credentials?: Record<string, string> | null;
  settings?: Record<string, unknown>;
  state?: Record<string, unknown>;
  clock?: TestClock;
  defaultCurrency?: string;
}

export function sourceHarness(options: HarnessOptions): SourceHarness {
  const clock = options.clock ?? clockAt('2026-11-25T12:00:00Z');
  const sleeps: number[] = [];
  const retryWaits: number[] = [];
  const savedCredentials: Record<string, string>[] = [];
  const controller = new AbortController();
  const harness: SourceHarness = {
    clock,
    sleeps,
    retryWaits,
    savedCredentials,
    state: { ...options.state },
    ctx: undefined as unknown as SourceContext,
  };
  let credentials = options.credentials ?? null;
  harness.ctx = {
    integrationId: 'int_test',
    shopDomain: options.shopDomain,
    get credentials() {
      return credentials;
    },
    settings: options.settings ?? {},
    http: createHttpClient({
      allowPrivate: true,
      backoffMs: 10,
      sleep: async (ms) => {
        retryWaits.push(ms);
      },
    }),
    defaultCurrency: options.defaultCurrency ?? 'USD',
    signal: controller.signal,
    logger: pino({ level: 'silent' }),
    now: clock.now,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.advance(ms / 1000);
    },
    get state() {
      return harness.state;
    },
    setState: (state) => {
      harness.state = { ...state };
    },
    saveCredentials: async (c) => {
      savedCredentials.push({ ...c });
      credentials = { ...c };
    },
  } as SourceContext;
  return harness;
}

/** Every item of a run, in order. */
export async function collect(
  source: IntegrationSource,
  ctx: SourceContext,
): Promise<SourceItem[]> {
  const out: SourceItem[] = [];
  for await (const item of source.items(ctx)) out.push(item);
  return out;
}

/** The product items, by external id. */
export function productsById(items: SourceItem[]) {
  const map = new Map<string, Extract<SourceItem, { kind: 'product' }>['product']>();
  for (const item of items) if (item.kind === 'product') map.set(item.externalId, item.product);
  return map;
}

/** Whether the product schema (what the sync validates with) takes the item's product. */
export function acceptedByProductSchema(item: SourceItem): boolean {
  return item.kind === 'product' && ProductCreate.safeParse(item.product).success;
}

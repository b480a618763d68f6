/**
 * The analytics store (CONTRACT part 9): every interaction, whatever its source, is classified,
 * deduplicated and stored append-only, and the daily rollups the metrics read are updated in
 * the same transaction (in code, not triggers, so PostgreSQL runs the same).
 */
import {
  AI_KINDS,
  addAgentDays,
  addBrandDays,
  addProductDays,
  addRevenue,
  addTraffic,
  INTERACTION_COLUMNS,
  insertNewInteractions,
} from '../../db/queries/analytics.js';
import type {
  AnalyticsDailyAgentTable,
  AnalyticsDailyBrandTable,
  AnalyticsDailyProductTable,
  AnalyticsDailyRevenueTable,
  AnalyticsDailyTrafficTable,
  AnalyticsEventType,
  InteractionKind,
  NewInteractionRow,
} from '../../db/schema.js';
import { bumpChangeVersion } from '../../db/queries/change-versions.js';
import { storedTimestamp } from '../../db/timestamps.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import { SLUG_PATTERN } from '../discovery/slug.js';
import type { AccessRecord, AgentClass } from './access-record.js';
import { signatureAgentName } from './agents.js';
import { classifyAgent } from './classify.js';
import { recordSearches } from './searches.js';
import { keptText } from '../../text.js';

export interface RecordResult {
  /** Interactions written. */
  stored: number;
  /** Interactions already stored (same dedupe key), or repeated within the batch: skipped. */
  duplicates: number;
}

export interface RecordOptions {
  /** DEFAULT_CURRENCY: conversions in it count as revenue (default USD). */
  currency?: string;
}

/** Longest values kept (a client chooses them). */
export const MAX_RECORDED_PATH = 2048;
export const MAX_RECORDED_AGENT = 512;

const SUCCESS = (status: number | null) =>
  status !== null && ((status >= 200 && status < 300) || status === 304);

export function isAiKind(kind: InteractionKind): boolean {
  return kind === 'assistant' || kind === 'search' || kind === 'training' || kind === 'agent';
}

/**
 * The brand slug a discovery path names (`/v1/brands/<slug>`, `/v1/brands/<slug>.json`,
 * `/v1/brands/<slug>/`, `/v1/feeds/<slug>/products.json`), wherever the tree is mounted (a
 * CDN may serve it under a prefix), or null.
 */
export function brandOfPath(path: string): string | null {
  let decoded = path;
  if (path.includes('%')) {
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return null;
    }
  }
  const segments = decoded.split('/');
  for (let i = 0; i + 2 < segments.length; i++) {
    if (segments[i] !== 'v1') continue;
    const section = segments[i + 1];
    if (section !== 'brands' && section !== 'feeds') continue;
    const name = segments[i + 2]!.replace(/\.json$/, '');
    return SLUG_PATTERN.test(name) ? name : null;
  }
  return null;
}

/** The interaction row of one request seen by a server or a CDN. */
export function accessRow(record: AccessRecord, who: AgentClass): NewInteractionRow {
  const path = keptText(record.path, MAX_RECORDED_PATH);
  return {
    at: storedTimestamp(record.at),
    source: record.source,
    method: keptText(record.method, 16),
    path,
    brand: record.source === 'export' ? null : brandOfPath(path),
    product_id: null,
    status: record.status,
    bytes: record.bytes,
    user_agent: record.userAgent === null ? null : keptText(record.userAgent, MAX_RECORDED_AGENT),
    agent: who.agent === null ? null : keptText(who.agent, MAX_RECORDED_AGENT),
    operator: who.operator,
    kind: who.kind,
    verified: who.verified ? 1 : 0,
    event_type: null,
    amount_minor: null,
    currency: null,
    dedupe_key: record.dedupeKey,
  };
}

/**
 * Records requests (the discovery server's, the feed export's, a CDN log's): classifies each
 * by its user agent and Signature-Agent, skips those whose dedupe key is already stored, and
 * writes the rest with their rollups in one transaction (the caller's, when `db` is one).
 */
export async function recordAccess(
  db: Executor,
  records: AccessRecord[],
  options: RecordOptions = {},
): Promise<RecordResult> {
  const rows = records.map((r) => accessRow(r, whoMade(r)));
  if (!records.some((r) => r.search)) return storeInteractions(db, rows, options);
  return withTransaction(db, async (trx) => {
    const result = await storeInteractions(trx, rows, options);
    await recordSearches(trx, records);
    return result;
  });
}

/**
 * Who made a request: its user agent and Signature-Agent (classifyAgent); a UCP catalog call
 * that no known AI agent made is the `agent` its UCP-Agent profile names (by the profile's
 * host), or `UCP agent` when it names none: only agents call the catalog.
 */
function whoMade(r: AccessRecord): AgentClass {
  const who = classifyAgent(r.userAgent, r.signatureAgent, r.verified);
  if (r.ucpAgent === undefined || isAiKind(who.kind)) return who;
  return {
    agent: r.ucpAgent ? signatureAgentName(r.ucpAgent) : 'UCP agent',
    operator: null,
    kind: 'agent',
    verified: false,
  };
}

/** An event as validated by the events API (analytics/events.ts). */
export interface AnalyticsEvent {
  /** The client's id: a second event with the same id is a retry and adds nothing. */
  id?: string | undefined;
  type: AnalyticsEventType;
  product_id: string;
  occurred_at: Date;
  /** The agent the client names (`ChatGPT-User`, `my-shopping-agent`), if any. */
  agent?: string | null | undefined;
  /** Conversions: the amount in minor units of `currency`. */
  amount_minor?: number | undefined;
  currency?: string | undefined;
}

/**
 * Who an event's agent is: a known agent keeps its operator and kind; any other name (or
 * none) is an `agent` (the events API reports what AI agents did), never a bot or a person.
 */
export function eventAgent(agent: string | null | undefined): AgentClass {
  if (agent) {
    const who = classifyAgent(agent);
    if (isAiKind(who.kind)) return { ...who, verified: false };
    return {
      agent: keptText(agent, MAX_RECORDED_AGENT),
      operator: null,
      kind: 'agent',
      verified: false,
    };
  }
  return { agent: null, operator: null, kind: 'agent', verified: false };
}

/** Records validated events (views, clicks, conversions) with their rollups, in one transaction. */
export async function recordEvents(
  db: Executor,
  events: AnalyticsEvent[],
  options: RecordOptions = {},
): Promise<RecordResult> {
  const rows = events.map((e): NewInteractionRow => {
    const who = eventAgent(e.agent);
    return {
      at: storedTimestamp(e.occurred_at),
      source: 'event',
      method: null,
      path: null,
      brand: null,
      product_id: e.product_id,
      status: null,
      bytes: null,
      user_agent: null,
      agent: who.agent,
      operator: who.operator,
      kind: who.kind,
      verified: 0,
      event_type: e.type,
      amount_minor: e.type === 'conversion' ? (e.amount_minor ?? 0) : null,
      currency: e.type === 'conversion' ? (e.currency ?? options.currency ?? 'USD') : null,
      dedupe_key: e.id === undefined ? null : `event:${e.id}`,
    };
  });
  return storeInteractions(db, rows, options);
}

/**
 * Writes interaction rows not stored yet and adds them to the rollups, in one transaction.
 * Exported for the seeds and tests that build rows themselves.
 */
export async function storeInteractions(
  db: Executor,
  rows: NewInteractionRow[],
  options: RecordOptions = {},
): Promise<RecordResult> {
  if (rows.length === 0) return { stored: 0, duplicates: 0 };
  const currency = options.currency ?? 'USD';
  return withTransaction(db, async (trx) => {
    const fresh = await insertNew(trx, rows);
    const rollups = rollupsOf(fresh, currency);
    await addTraffic(trx, rollups.traffic);
    await addAgentDays(trx, rollups.agents);
    await addBrandDays(trx, rollups.brands);
    await addProductDays(trx, rollups.products);
    await addRevenue(trx, rollups.revenue);
    if (rollups.traffic.length > 0) await bumpChangeVersion(trx, 'analytics_traffic');
    if (rollups.products.length > 0 || rollups.revenue.length > 0)
      await bumpChangeVersion(trx, 'analytics_products');
    return { stored: fresh.length, duplicates: rows.length - fresh.length };
  });
}

/**
 * Inserts the rows whose dedupe key is not stored yet (nor earlier in `rows`: the first one
 * is kept), leaving the check to the unique index; answers the rows inserted.
 */
async function insertNew(trx: Executor, rows: NewInteractionRow[]): Promise<NewInteractionRow[]> {
  let keyed = false;
  const values = rows.map((row) => {
    if (row.dedupe_key != null) keyed = true;
    return INTERACTION_COLUMNS.map((c) => row[c] ?? (c === 'verified' ? 0 : null));
  });
  const inserted = await insertNewInteractions(trx, values, keyed);
  if (!inserted) return rows;
  const keys = new Set(inserted);
  // A key is inserted once: its first row in `rows` (statements insert in order).
  return rows.filter((row) => row.dedupe_key == null || keys.delete(row.dedupe_key));
}

/** What a set of interaction rows adds to each rollup, one row per key. */
export function rollupsOf(
  rows: NewInteractionRow[],
  currency: string,
): {
  traffic: AnalyticsDailyTrafficTable[];
  agents: AnalyticsDailyAgentTable[];
  brands: AnalyticsDailyBrandTable[];
  products: AnalyticsDailyProductTable[];
  revenue: AnalyticsDailyRevenueTable[];
} {
  const traffic = new Map<string, AnalyticsDailyTrafficTable>();
  const agents = new Map<string, AnalyticsDailyAgentTable>();
  const brands = new Map<string, AnalyticsDailyBrandTable>();
  const products = new Map<string, AnalyticsDailyProductTable>();
  const revenue = new Map<string, AnalyticsDailyRevenueTable>();
  for (const row of rows) {
    const day = row.at.slice(0, 10);
    if (row.event_type !== 'conversion') {
      const brand = row.brand ?? '';
      const agent = row.agent ?? '';
      const operator = row.operator ?? '';
      const key = `${day}\u0000${row.source}\u0000${brand}\u0000${agent}\u0000${operator}\u0000${row.kind}`;
      let t = traffic.get(key);
      if (!t) {
        t = {
          day,
          source: row.source,
          brand,
          agent,
          operator,
          kind: row.kind,
          interactions: 0,
          fetched: 0,
          verified: 0,
          bytes: 0,
        };
        traffic.set(key, t);
      }
      const fetched = SUCCESS(row.status ?? null);
      t.interactions++;
      if (fetched) t.fetched++;
      if (row.verified) t.verified++;
      t.bytes += row.bytes ?? 0;
      const akey = `${day}\u0000${row.source}\u0000${agent}\u0000${operator}\u0000${row.kind}`;
      let a = agents.get(akey);
      if (!a) {
        a = {
          day,
          source: row.source,
          agent,
          operator,
          kind: row.kind,
          interactions: 0,
          fetched: 0,
          verified: 0,
          bytes: 0,
        };
        agents.set(akey, a);
      }
      a.interactions++;
      if (fetched) a.fetched++;
      if (row.verified) a.verified++;
      a.bytes += row.bytes ?? 0;
      if (brand && isAiKind(row.kind)) {
        const bkey = `${day}\u0000${brand}`;
        let b = brands.get(bkey);
        if (!b) {
          b = { day, brand, interactions: 0, fetched: 0 };
          brands.set(bkey, b);
        }
        b.interactions++;
        if (fetched) b.fetched++;
      }
    }
    if (!row.product_id) continue;
    const pkey = `${day}\u0000${row.product_id}`;
    let p = products.get(pkey);
    if (!p) {
      p = {
        day,
        product_id: row.product_id,
        interactions: 0,
        assistant: 0,
        search: 0,
        training: 0,
        agent: 0,
        views: 0,
        clicks: 0,
        conversions: 0,
        revenue_minor: 0,
      };
      products.set(pkey, p);
    }
    if (row.event_type === 'conversion') {
      const cur = row.currency ?? currency;
      const amount = row.amount_minor ?? 0;
      p.conversions++;
      if (cur === currency) p.revenue_minor += amount;
      const rkey = `${day}\u0000${cur}\u0000${row.product_id}`;
      let r = revenue.get(rkey);
      if (!r) {
        r = { day, currency: cur, product_id: row.product_id, conversions: 0, amount_minor: 0 };
        revenue.set(rkey, r);
      }
      r.conversions++;
      r.amount_minor += amount;
      continue;
    }
    if (!AI_KINDS.includes(row.kind)) continue;
    p.interactions++;
    p[row.kind as 'assistant' | 'search' | 'training' | 'agent']++;
    if (row.event_type === 'view') p.views++;
    else if (row.event_type === 'click') p.clicks++;
  }
  return {
    traffic: [...traffic.values()],
    agents: [...agents.values()],
    brands: [...brands.values()],
    products: [...products.values()],
    revenue: [...revenue.values()],
  };
}

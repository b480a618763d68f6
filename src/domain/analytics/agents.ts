/**
 * Who made a request (CONTRACT part 9): an AI agent of the table in ai-agents.json (assistant,
 * search, training, agent), a browsing agent that sent `Signature-Agent`, another bot (isbot),
 * or a person. The table is data: updating it needs no code change.
 */
import { isbotMatch } from 'isbot';
import type { AgentClass } from './access-record.js';
import table from './ai-agents.json' with { type: 'json' };

export type AgentKind = 'assistant' | 'search' | 'training' | 'agent';

/** One row of the table. */
export interface KnownAgent {
  /** The token its user agent carries (`GPTBot`), which is also its name. */
  name: string;
  operator: string | null;
  kind: AgentKind;
  /** A robots.txt token only (Google-Extended, Applebot-Extended): never in a request. */
  robotsTxtOnly: boolean;
}

const KINDS: ReadonlySet<string> = new Set(['assistant', 'search', 'training', 'agent']);

/** The table, checked once when loaded: a bad row is a clear error naming it. */
export function loadAgentTable(data: unknown): KnownAgent[] {
  const rows = (data as { agents?: unknown }).agents;
  if (!Array.isArray(rows)) throw new Error('ai-agents.json: agents must be an array');
  const seen = new Set<string>();
  return rows.map((row: unknown, i) => {
    const r = row as Record<string, unknown>;
    const where = `ai-agents.json: agents[${i}]`;
    if (typeof r.name !== 'string' || r.name.trim() === '')
      throw new Error(`${where}.name must be a non-empty string`);
    if (r.operator !== null && typeof r.operator !== 'string')
      throw new Error(`${where}.operator must be a string or null`);
    if (typeof r.kind !== 'string' || !KINDS.has(r.kind))
      throw new Error(`${where}.kind must be one of assistant, search, training, agent`);
    const key = r.name.toLowerCase();
    if (seen.has(key)) throw new Error(`${where}.name '${r.name}' is listed twice`);
    seen.add(key);
    return {
      name: r.name,
      operator: r.operator,
      kind: r.kind as AgentKind,
      robotsTxtOnly: r.robots_txt_only === true,
    };
  });
}

/** Every known AI agent, as ai-agents.json lists them. */
export const AI_AGENTS: readonly KnownAgent[] = loadAgentTable(table);

/** Where the table comes from (its licence: ai-agents.LICENSE beside it). */
export const AI_AGENTS_SOURCE: string = (table as { source: string }).source;

/** Tokens matched in requests, the longest (most specific) first. */
const MATCHED = AI_AGENTS.filter((a) => !a.robotsTxtOnly)
  .map((a) => ({ agent: a, token: a.name.toLowerCase() }))
  .sort((a, b) => b.token.length - a.token.length);

const isWordChar = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 97 && code <= 122) || (code >= 65 && code <= 90);

/** The table's agent a user agent names, matched as a whole word, or null. */
function findAgent(ua: string): KnownAgent | null {
  const lower = ua.toLowerCase();
  for (const { agent, token } of MATCHED) {
    let at = lower.indexOf(token);
    while (at >= 0) {
      const before = at === 0 ? 0 : lower.charCodeAt(at - 1);
      const after = lower.charCodeAt(at + token.length); // NaN past the end
      if (!isWordChar(before) && !isWordChar(after)) return agent;
      at = lower.indexOf(token, at + 1);
    }
  }
  return null;
}

/** The whole product token around isbot's match: `Googlebot` rather than its pattern's `Google`. */
function botName(ua: string, match: string): string {
  const at = ua.indexOf(match);
  if (at < 0) return match.slice(0, 100);
  const token = /[\w.-]/;
  let start = at;
  let end = at + match.length;
  while (start > 0 && token.test(ua[start - 1]!)) start--;
  while (end < ua.length && token.test(ua[end]!)) end++;
  return ua.slice(start, end).slice(0, 100);
}

const HUMAN: AgentClass = Object.freeze({
  agent: null,
  operator: null,
  kind: 'human',
  verified: false,
});

const MEMO_LIMIT = 10_000;
const memo = new Map<string, AgentClass>();

function classifyUserAgentOnly(ua: string): AgentClass {
  const known = findAgent(ua);
  if (known)
    return { agent: known.name, operator: known.operator, kind: known.kind, verified: false };
  const bot = isbotMatch(ua);
  if (bot) return { agent: botName(ua, bot), operator: null, kind: 'bot', verified: false };
  return HUMAN;
}

/**
 * Who a request came from. A request carrying `Signature-Agent` is a browsing agent (kind
 * `agent`, named by the Signature-Agent's host; `verified` when its signature was checked and
 * held: verifyWebBotAuth) unless its user agent names an agent of the table, which wins (with
 * `verified` kept). Then the table, then isbot's generic crawlers (`bot`); anything else is a
 * person. Memoised: logs repeat the same few user agents over and over. The returned object is
 * shared: do not change it.
 */
export function classifyAgent(
  userAgent: string | null,
  signatureAgent?: string | null,
  verified = false,
): AgentClass {
  let base: AgentClass;
  if (!userAgent) base = HUMAN;
  else {
    const hit = memo.get(userAgent);
    if (hit) base = hit;
    else {
      base = classifyUserAgentOnly(userAgent);
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(userAgent, base);
    }
  }
  if (!signatureAgent) return base;
  if (isAiKind(base.kind)) return { ...base, verified };
  return { agent: signatureAgentName(signatureAgent), operator: null, kind: 'agent', verified };
}

/**
 * The name a `Signature-Agent` header gives: its host (`chatgpt.com`). The header is a
 * structured field: a quoted URL (`"https://chatgpt.com"`), or in the newer drafts a dictionary
 * member (`sig1="https://chatgpt.com"`).
 */
export function signatureAgentName(header: string): string {
  const url = signatureAgentUrl(header);
  if (url) return url.host;
  return header.trim().replace(/^"|"$/g, '').slice(0, 200) || 'unknown';
}

/** The URL a `Signature-Agent` header names, or null when it names none. */
export function signatureAgentUrl(header: string): URL | null {
  const m = /"([^"]*)"/.exec(header);
  const raw = (m ? m[1]! : header).trim();
  try {
    const url = new URL(raw.includes('://') ? raw : `https://${raw}`);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

/** Whether a kind is an AI interaction (`bot` and `human` are counted apart). */
export function isAiKind(kind: AgentClass['kind']): kind is AgentKind {
  return kind === 'assistant' || kind === 'search' || kind === 'training' || kind === 'agent';
}

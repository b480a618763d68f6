/**
 * Known AI agents and crawlers by the token their user agent carries (CONTRACT part 9).
 * Order matters only where one token contains another: the longer, more specific one first.
 */
const AGENTS: [token: string, name: string][] = [
  ['ChatGPT-User', 'ChatGPT-User'],
  ['OAI-SearchBot', 'OAI-SearchBot'],
  ['GPTBot', 'GPTBot'],
  ['Claude-User', 'Claude-User'],
  ['Claude-SearchBot', 'Claude-SearchBot'],
  ['ClaudeBot', 'ClaudeBot'],
  ['Claude-Web', 'Claude-Web'],
  ['anthropic-ai', 'anthropic-ai'],
  ['Perplexity-User', 'Perplexity-User'],
  ['PerplexityBot', 'PerplexityBot'],
  ['Google-Extended', 'Google-Extended'],
  ['Google-CloudVertexBot', 'Google-CloudVertexBot'],
  ['Gemini-Deep-Research', 'Gemini-Deep-Research'],
  ['Applebot-Extended', 'Applebot-Extended'],
  ['Amazonbot', 'Amazonbot'],
  ['meta-externalagent', 'meta-externalagent'],
  ['meta-externalfetcher', 'meta-externalfetcher'],
  ['FacebookBot', 'FacebookBot'],
  ['CCBot', 'CCBot'],
  ['Bytespider', 'Bytespider'],
  ['cohere-ai', 'cohere-ai'],
  ['cohere-training-data-crawler', 'cohere-training-data-crawler'],
  ['MistralAI-User', 'MistralAI-User'],
  ['DuckAssistBot', 'DuckAssistBot'],
  ['YouBot', 'YouBot'],
  ['PetalBot', 'PetalBot'],
  ['Diffbot', 'Diffbot'],
  ['AI2Bot', 'AI2Bot'],
  ['Timpibot', 'Timpibot'],
];

const LOWER = AGENTS.map(([token, name]) => [token.toLowerCase(), name] as const);
const MEMO_LIMIT = 1000;
const memo = new Map<string, string | null>();

/** The known AI agent a user agent names (`GPTBot`, `ClaudeBot`, ...), or null. */
export function classifyUserAgent(userAgent: string | null | undefined): string | null {
  if (!userAgent) return null;
  // Agents send the same few strings over and over: remember the last thousand answers.
  const known = memo.get(userAgent);
  if (known !== undefined) return known;
  const ua = userAgent.toLowerCase();
  let agent: string | null = null;
  for (const [token, name] of LOWER) {
    if (ua.includes(token)) {
      agent = name;
      break;
    }
  }
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(userAgent, agent);
  return agent;
}

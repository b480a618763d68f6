import t from 'tap';
import {
  AI_AGENTS,
  classifyAgent,
  isAiKind,
  loadAgentTable,
  signatureAgentName,
} from '../../../src/domain/analytics/agents.js';

// User agents as the operators document them (and as they appear in access logs).
const AI: [ua: string, agent: string, operator: string, kind: string][] = [
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
    'ChatGPT-User',
    'OpenAI',
    'assistant',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot',
    'OAI-SearchBot',
    'OpenAI',
    'search',
  ],
  [
    // The form OpenAI's bots page gives since 2026: a whole browser string, then the bot.
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36; compatible; OAI-SearchBot/1.3; +https://openai.com/searchbot',
    'OAI-SearchBot',
    'OpenAI',
    'search',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
    'GPTBot',
    'OpenAI',
    'training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
    'Claude-User',
    'Anthropic',
    'assistant',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
    'ClaudeBot',
    'Anthropic',
    'training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)',
    'Claude-SearchBot',
    'Anthropic',
    'search',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
    'PerplexityBot',
    'Perplexity',
    'search',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
    'Perplexity-User',
    'Perplexity',
    'assistant',
  ],
  ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'CCBot', 'Common Crawl Foundation', 'training'],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36',
    'Amazonbot',
    'Amazon',
    'training',
  ],
  [
    'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
    'meta-externalagent',
    'Meta',
    'training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)',
    'MistralAI-User',
    'Mistral AI',
    'assistant',
  ],
  [
    'DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)',
    'DuckAssistBot',
    'DuckDuckGo',
    'assistant',
  ],
  [
    'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)',
    'Bytespider',
    'ByteDance',
    'training',
  ],
];

const PEOPLE = [
  // Chrome on Windows, Safari on macOS, Firefox on Linux, Safari on iPhone.
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
];

const CRAWLERS: [ua: string, agent: string][] = [
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Googlebot'],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36',
    'bingbot',
  ],
  ['Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', 'AhrefsBot'],
];

t.test('AI agents of each kind are named with their operator and kind', async (t) => {
  for (const [ua, agent, operator, kind] of AI) {
    t.same(classifyAgent(ua), { agent, operator, kind, verified: false }, agent);
    t.ok(isAiKind(classifyAgent(ua).kind));
  }
});

t.test('tokens match case-insensitively, as whole words, the most specific first', async (t) => {
  t.equal(classifyAgent('mozilla/5.0 (compatible; gptbot/1.2)').agent, 'GPTBot');
  t.equal(classifyAgent('CLAUDE-SEARCHBOT/1.0').agent, 'Claude-SearchBot');
  // Ai2Bot-Dolma contains AI2Bot: the longer token wins.
  t.equal(
    classifyAgent('Mozilla/5.0 (compatible) Ai2Bot-Dolma (+https://allenai.org/crawler)').agent,
    'Ai2Bot-Dolma',
  );
  // A token inside a longer word is not that agent.
  t.not(classifyAgent('Mozilla/5.0 (compatible; XCCBotz/1.0)').agent, 'CCBot');
});

t.test('robots.txt-only tokens are listed but never matched', async (t) => {
  const onlyRobots = AI_AGENTS.filter((a) => a.robotsTxtOnly).map((a) => a.name);
  t.same(onlyRobots.sort(), ['Applebot-Extended', 'Google-Extended']);
  t.notOk(isAiKind(classifyAgent('Google-Extended').kind));
  t.equal(classifyAgent('Mozilla/5.0 (compatible; Applebot-Extended/0.1)').agent, 'Applebot');
});

t.test("a person's browser is human, the same answer every time (memoised)", async (t) => {
  for (const ua of PEOPLE) {
    t.same(classifyAgent(ua), { agent: null, operator: null, kind: 'human', verified: false }, ua);
    t.equal(classifyAgent(ua), classifyAgent(ua));
  }
  t.equal(classifyAgent(null).kind, 'human');
  t.equal(classifyAgent('').kind, 'human');
});

t.test('generic crawlers are bots, counted apart from AI agents', async (t) => {
  for (const [ua, agent] of CRAWLERS) {
    const c = classifyAgent(ua);
    t.same(c, { agent, operator: null, kind: 'bot', verified: false }, agent);
    t.notOk(isAiKind(c.kind));
  }
});

t.test('a Signature-Agent request is a browsing agent, verified only when told', async (t) => {
  const chrome = PEOPLE[0]!;
  t.same(classifyAgent(chrome, '"https://chatgpt.com"'), {
    agent: 'chatgpt.com',
    operator: null,
    kind: 'agent',
    verified: false,
  });
  t.same(classifyAgent(chrome, 'sig1="https://agent.example"', true), {
    agent: 'agent.example',
    operator: null,
    kind: 'agent',
    verified: true,
  });
  // A known agent's own name wins over the header; the verification is kept.
  const signed = classifyAgent(AI[0]![0], '"https://chatgpt.com"', true);
  t.same(signed, { agent: 'ChatGPT-User', operator: 'OpenAI', kind: 'assistant', verified: true });
  // ... and the memoised answer without the header is untouched.
  t.equal(classifyAgent(AI[0]![0]).verified, false);
  t.equal(signatureAgentName('"https://bot.example.com/agent"'), 'bot.example.com');
  t.equal(signatureAgentName('bot.example.org'), 'bot.example.org');
});

t.test('the table refuses bad rows, naming them', async (t) => {
  t.throws(() => loadAgentTable({}), /agents must be an array/);
  t.throws(
    () => loadAgentTable({ agents: [{ name: 'X', operator: null, kind: 'crawler' }] }),
    /agents\[0\]\.kind must be one of/,
  );
  t.throws(
    () =>
      loadAgentTable({
        agents: [
          { name: 'X', operator: null, kind: 'search' },
          { name: 'x', operator: 'Y', kind: 'search' },
        ],
      }),
    /agents\[1\]\.name 'x' is listed twice/,
  );
  t.throws(
    () => loadAgentTable({ agents: [{ name: '', operator: null, kind: 'search' }] }),
    /name must be/,
  );
  t.ok(AI_AGENTS.length > 100);
});

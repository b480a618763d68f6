import { isbot } from 'isbot';
import type { AgentClass } from './access-record.js';
import { classifyUserAgent } from './ai-agents.js';

// Stand-in until the classification table lands (analytics/agents.ts).
const KINDS: Record<string, [operator: string, kind: AgentClass['kind']]> = {
  'ChatGPT-User': ['OpenAI', 'assistant'],
  'OAI-SearchBot': ['OpenAI', 'search'],
  GPTBot: ['OpenAI', 'training'],
  'Claude-User': ['Anthropic', 'assistant'],
  'Claude-SearchBot': ['Anthropic', 'search'],
  ClaudeBot: ['Anthropic', 'training'],
  'Perplexity-User': ['Perplexity', 'assistant'],
  PerplexityBot: ['Perplexity', 'search'],
};

/** Who made a request: agent, operator, kind (CONTRACT part 9). */
export function classifyAgent(
  userAgent: string | null,
  signatureAgent?: string | null,
): AgentClass {
  const name = classifyUserAgent(userAgent);
  if (name) {
    const [operator, kind] = KINDS[name] ?? [null, 'training'];
    return { agent: name, operator, kind, verified: false };
  }
  if (signatureAgent)
    return { agent: signatureAgent, operator: null, kind: 'agent', verified: false };
  if (userAgent && isbot(userAgent))
    return { agent: null, operator: null, kind: 'bot', verified: false };
  return { agent: null, operator: null, kind: 'human', verified: false };
}

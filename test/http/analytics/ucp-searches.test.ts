import t from 'tap';
import { seedDemo } from '../../../src/seed/demo.js';
import { clockAt } from '../../support/clock.js';
import { signInDashboard } from '../../support/dashboard.js';
import { startTestServer } from '../../support/server.js';

// Each UCP catalog call is an AI interaction of the agent it names; each search is counted by
// its query, and the searches that found nothing apart (GET /v1/analytics/searches).

t.test('catalog calls count as the named agent, and searches by query', async (t) => {
  const clock = clockAt('2026-11-25T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  await seedDemo(s.server.store.db, { currency: 'USD' }, { analytics: false });
  const feeds = s.server.discovery.url;
  const rest = (body: unknown, agent?: string) =>
    fetch(`${feeds}/ucp/catalog/search`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'node',
        ...(agent ? { 'ucp-agent': `profile="${agent}"` } : {}),
      },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);
  const shopper = 'https://shopper.example/profiles/agent.json';
  t.ok((await rest({ query: 'Rain  Jacket' }, shopper)).products.length > 0);
  await rest({ query: 'rain jacket' }, shopper);
  await rest({ query: 'hovercraft' }, shopper);
  await rest({ query: 'Hovercraft ' });
  await rest({ query: 'kettle' });
  await rest({ filters: { categories: ['Home'] } }, shopper); // a browse: no query to count
  const mcp = await fetch(`${feeds}/ucp/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'search_catalog',
        arguments: {
          meta: { 'ucp-agent': { profile: 'https://mcp-agent.example/profile.json' } },
          catalog: { query: 'unobtainium' },
        },
      },
    }),
  });
  t.equal(mcp.status, 200);
  await mcp.text();
  await s.server.discovery.flushRequests();

  const searches = await s.request('GET', '/v1/analytics/searches?start_date=2026-11-25');
  t.equal(searches.status, 200);
  t.same(searches.body.top_queries, [
    { query: 'hovercraft', searches: 2, no_results: 2 },
    { query: 'rain jacket', searches: 2, no_results: 0 },
    { query: 'kettle', searches: 1, no_results: 0 },
    { query: 'unobtainium', searches: 1, no_results: 1 },
  ]);
  t.same(searches.body.top_without_results, [
    { query: 'hovercraft', searches: 2, no_results: 2 },
    { query: 'unobtainium', searches: 1, no_results: 1 },
  ]);
  const one = await s.request('GET', '/v1/analytics/searches?start_date=2026-11-25&limit=1');
  t.equal(one.body.top_queries.length, 1);
  const bad = await s.request('GET', '/v1/analytics/searches?limit=0');
  t.equal(bad.status, 400);

  const ai = await s.request(
    'GET',
    '/v1/analytics/ai-interactions?start_date=2026-11-25&end_date=2026-11-25',
  );
  const agents = Object.fromEntries(
    ai.body.breakdown.agents.map((a: any) => [a.agent, [a.kind, a.interactions]]),
  );
  t.same(agents['shopper.example'], ['agent', 4], 'the UCP-Agent profile names the agent');
  t.same(agents['mcp-agent.example'], ['agent', 1], 'meta["ucp-agent"] names it over MCP');
  t.same(agents['UCP agent'], ['agent', 2], 'a call naming no agent is still an agent');
  t.equal(ai.body.breakdown.other.humans, 0, 'no catalog call counts as a person');

  const dash = await signInDashboard(s, s.keys.read_only);
  const page = await dash.get('/dashboard/analytics?start_date=2026-11-25');
  t.equal(page.status, 200);
  t.match(page.text, /What agents searched for[\s\S]*<td>rain jacket<\/td>/);
  t.match(page.text, /Searched for, not found[\s\S]*<td>unobtainium<\/td>/);
  t.match(page.text, /<td>shopper\.example<\/td>/, 'the agent among the top agents');
});

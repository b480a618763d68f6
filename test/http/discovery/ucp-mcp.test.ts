import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startDiscoveryServer } from '../../../src/http/discovery/server.js';
import { seedDemo } from '../../../src/seed/demo.js';
import { createClock, startTestStore } from '../../support/pipeline.js';
import { loadUcpValidators, schemaErrors } from '../../support/ucp.js';

const ucp = loadUcpValidators();
const META = { 'ucp-agent': { profile: 'https://agent.example/profiles/shopping-agent.json' } };

async function startMcp(t: Test, env: Record<string, string> = {}) {
  const s = await startTestStore(t, env);
  await seedDemo(s.db, { currency: 'USD' }, { analytics: false });
  const clock = createClock();
  const server = await startDiscoveryServer({
    config: s.config,
    db: s.db,
    logger: pino({ level: 'silent' }),
    port: 0,
    now: clock.now,
    recordRequests: false,
  });
  t.teardown(() => server.close());
  const rpc = async (body: string, method = 'POST', contentType = 'application/json') => {
    const res = await fetch(`${server.url}/ucp/mcp`, {
      method,
      headers: { 'content-type': contentType, accept: 'application/json, text/event-stream' },
      ...(method === 'POST' ? { body } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: text ? (JSON.parse(text) as any) : undefined,
    };
  };
  return { ...s, server, rpc };
}

t.test('the official MCP client lists the three tools and calls each', async (t) => {
  const c = await startMcp(t);
  const client = new Client({ name: 'agentshelf-test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${c.server.url}/ucp/mcp`)));
  t.teardown(() => client.close());
  const { tools } = await client.listTools();
  t.same(
    tools.map((tool) => tool.name),
    ['search_catalog', 'lookup_catalog', 'get_product'],
  );
  for (const tool of tools) {
    t.equal(tool.inputSchema.type, 'object');
    t.ok(
      (tool.inputSchema.properties as Record<string, unknown>).catalog,
      `${tool.name} takes catalog`,
    );
  }

  const search = await client.callTool({
    name: 'search_catalog',
    arguments: { meta: META, catalog: { query: 'gooseneck kettle' } },
  });
  t.ok(ucp.searchResponse(search.structuredContent), schemaErrors(ucp.searchResponse));
  const found = (search.structuredContent as any).products;
  t.equal(found[0].id, 'TW-KETTLE');
  t.same(
    JSON.parse((search.content as any)[0].text),
    search.structuredContent,
    'the text is the same JSON',
  );

  const lookup = await client.callTool({
    name: 'lookup_catalog',
    arguments: { meta: META, catalog: { ids: ['TW-KETTLE', 'nope'] } },
  });
  t.ok(ucp.lookupResponse(lookup.structuredContent), schemaErrors(ucp.lookupResponse));
  t.equal((lookup.structuredContent as any).products[0].id, 'TW-KETTLE');

  const product = await client.callTool({
    name: 'get_product',
    arguments: {
      meta: META,
      catalog: { id: 'NW-RAIN', selected: [{ name: 'Color', label: 'Navy' }] },
    },
  });
  t.ok(ucp.productResponse(product.structuredContent), schemaErrors(ucp.productResponse));
  t.same(
    (product.structuredContent as any).product.variants.map((v: any) => v.id),
    ['NW-RAIN-NAVY-L', 'NW-RAIN-NAVY-M'],
  );
});

t.test('MCP answers the same as REST for the same call', async (t) => {
  const c = await startMcp(t);
  const catalog = { query: 'lamp', pagination: { limit: 3 } };
  const rest = await fetch(`${c.server.url}/ucp/catalog/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(catalog),
  });
  const mcp = await c.rpc(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'search_catalog', arguments: { meta: META, catalog } },
    }),
  );
  t.equal(mcp.status, 200);
  t.equal(mcp.body.id, 7);
  const a = (await rest.json()) as any;
  const b = mcp.body.result.structuredContent;
  t.same(b.products, a.products);
  t.equal(b.pagination.has_next_page, a.pagination.has_next_page);
});

t.test('malformed JSON-RPC gets its JSON-RPC error, never a 500', async (t) => {
  const c = await startMcp(t);
  const cases: [string, number, number][] = [
    ['{"jsonrpc": "2.0", "id": 1, "method":', 400, -32700],
    ['[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', 400, -32600],
    ['"ping"', 400, -32600],
    ['{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 400, -32600],
    ['{"jsonrpc": "2.0", "id": 1, "method": 5}', 400, -32600],
    ['{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', 400, -32600],
    ['{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}', 200, -32601],
    ['{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "buy"}}', 200, -32602],
    [
      '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_catalog"}}',
      200,
      -32602,
    ],
    [
      '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_catalog", "arguments": {"catalog": {"query": 3}}}}',
      200,
      -32602,
    ],
    [
      '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_catalog", "arguments": {"catalog": {"ids": ["a\\u0000"]}}}}',
      200,
      -32602,
    ],
  ];
  for (const [body, status, code] of cases) {
    const res = await c.rpc(body);
    t.equal(res.status, status, body);
    t.equal(res.body?.jsonrpc, '2.0', body);
    t.equal(res.body?.error?.code, code, body);
  }
  const invalid = await c.rpc(
    '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_catalog", "arguments": {"catalog": {"query": 3}}}}',
  );
  t.match(invalid.body.error.message, /^catalog\.query: /, 'names the field');
  const tooMany = await c.rpc(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'lookup_catalog',
        arguments: { catalog: { ids: Array.from({ length: 51 }, (_, i) => `x${i}`) } },
      },
    }),
  );
  t.equal(tooMany.body.error.code, -32602, 'a batch over the limit is invalid params');
  const notification = await c.rpc('{"jsonrpc": "2.0", "method": "notifications/initialized"}');
  t.equal(notification.status, 202);
  t.equal(notification.body, undefined);
  const get = await c.rpc('', 'GET');
  t.equal(get.status, 405, 'no SSE stream to open');
});

t.test('a refusal before the MCP handler is a JSON-RPC error with its status', async (t) => {
  const c = await startMcp(t);
  const ping = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
  const media = await c.rpc(ping('m-1'), 'POST', 'text/plain');
  t.equal(media.status, 415, 'not JSON: 415');
  t.same(media.body, {
    jsonrpc: '2.0',
    id: 'm-1',
    error: {
      code: -32000,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    },
  });
  const charset = await c.rpc(ping(2), 'POST', 'Application/JSON; charset=utf-8');
  t.same([charset.status, charset.body.result], [200, {}], 'a charset is still JSON');
  const large = await c.rpc(
    `{"jsonrpc":"2.0","id":3,"method":"ping","pad":"${'x'.repeat(1 << 20)}"}`,
  );
  t.equal(large.status, 413);
  t.same(large.body.id, null, 'the body was not read: no id');
  t.match(large.body, { jsonrpc: '2.0', error: { code: -32000, message: /^Payload too large/ } });
  const bad = await c.rpc('{"jsonrpc": "2.0", "id": 4,');
  t.same([bad.status, bad.body.id, bad.body.error.code], [400, null, -32700]);
});

t.test('an MCP call over the rate limit gets a JSON-RPC error, 429 and Retry-After', async (t) => {
  const c = await startMcp(t, { DISCOVERY_LIMIT_PER_MINUTE: '6' });
  const client = new Client({ name: 'agentshelf-test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${c.server.url}/ucp/mcp`)));
  t.teardown(() => client.close());
  // The client's own requests (initialize, its notification, perhaps a GET for a stream) count
  // too, in an order it does not fix: ping until the minute's window is spent. The clock is
  // held, so the window stays spent.
  let refused: Awaited<ReturnType<typeof c.rpc>> | undefined;
  for (let id = 1; id <= 7 && !refused; id++) {
    const res = await c.rpc(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    if (res.status === 429) refused = res;
    else t.equal(res.status, 200, 'under the limit');
  }
  t.ok(refused, 'the limit refused a call');
  t.match(refused!.body, {
    jsonrpc: '2.0',
    id: Number,
    error: { code: -32000, message: /^Too many requests: at most 6 requests a minute/ },
  });
  const named = await c.rpc(JSON.stringify({ jsonrpc: '2.0', id: 'over', method: 'ping' }));
  t.equal(named.status, 429);
  t.equal(named.body.id, 'over', "the refused request's id");
  t.ok(Number(named.headers.get('retry-after')) > 0, 'Retry-After');
  t.equal(named.headers.get('x-ratelimit-remaining'), '0');
  t.match(named.headers.get('content-type'), /^application\/json/);
  const unnamed = await c.rpc('{"jsonrpc": "2.0", "method": "ping",');
  t.same([unnamed.status, unnamed.body.id, unnamed.body.error.code], [429, null, -32000]);
  const rest = await fetch(`${c.server.url}/ucp/catalog/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"query":"lamp"}',
  });
  t.equal(rest.status, 429);
  t.notOk(((await rest.json()) as any).jsonrpc, 'REST keeps its own error');
  // The official client reads the refusal as an HTTP error carrying the JSON-RPC error.
  await t.rejects(
    client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'lamp' } } }),
    { code: 429, message: /"jsonrpc":"2\.0".*"code":-32000.*Too many requests/ },
  );
});

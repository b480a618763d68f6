import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startDiscoveryServer } from '../../../src/http/discovery/server.js';
import { seedDemo } from '../../../src/seed/demo.js';
import { startTestStore } from '../../support/pipeline.js';
import { loadUcpValidators, schemaErrors } from '../../support/ucp.js';

const ucp = loadUcpValidators();
const META = { 'ucp-agent': { profile: 'https://agent.example/profiles/shopping-agent.json' } };

async function startMcp(t: Test) {
  const s = await startTestStore(t);
  await seedDemo(s.db, { currency: 'USD' }, { analytics: false });
  const server = await startDiscoveryServer({
    config: s.config,
    db: s.db,
    logger: pino({ level: 'silent' }),
    port: 0,
    recordRequests: false,
  });
  t.teardown(() => server.close());
  const rpc = async (body: string, method = 'POST') => {
    const res = await fetch(`${server.url}/ucp/mcp`, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      ...(method === 'POST' ? { body } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
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

import { z } from 'zod';
import {
  runCatalogOperation,
  type CatalogCall,
  type CatalogDeps,
  type CatalogOperation,
} from '../../domain/ucp/catalog.js';
import {
  LookupRequest,
  ProductRequest,
  SearchRequest,
  UcpRequestError,
} from '../../domain/ucp/schemas.js';
import { VERSION } from '../../version.js';

/**
 * The UCP catalog as an MCP server (vendor/ucp/spec/catalog-mcp.md) at `POST /ucp/mcp`:
 * JSON-RPC 2.0 over MCP's streamable HTTP transport, answered with JSON (no SSE stream, no
 * session): `initialize`, `ping`, `tools/list` (search_catalog, lookup_catalog, get_product)
 * and `tools/call`. Whatever arrives, the answer is a JSON-RPC message (or 202 for a
 * notification), never a 500 for bad input.
 */

/** Newest first; a client asking for another gets the newest (MCP's version negotiation). */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** What the transport refuses before a message is read (as the SDK's server: 405, 413, 415, 429). */
export const TRANSPORT_ERROR = -32000;

export type JsonRpcId = string | number | null;

/** A JSON-RPC 2.0 error response. */
export function jsonRpcError(id: JsonRpcId, code: number, message: string): object {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** What the transport sends: a status and a JSON body (undefined: 202, nothing to say). */
export interface McpAnswer {
  status: number;
  body: object | undefined;
  call?: CatalogCall;
  /** The agent the call names (`meta["ucp-agent"].profile`), for analytics. */
  agentProfile?: string;
}

const TOOLS: {
  name: string;
  operation: CatalogOperation;
  schema: z.ZodType;
  description: string;
}[] = [
  {
    name: 'search_catalog',
    operation: 'search',
    schema: SearchRequest,
    description:
      "Search the store's catalog by words and filters (categories, price in minor units); ranked, a page at a time (pagination.cursor from the last page).",
  },
  {
    name: 'lookup_catalog',
    operation: 'lookup',
    schema: LookupRequest,
    description:
      'Products by product or variant id (at most 50 ids); each variant names the inputs that resolved to it.',
  },
  {
    name: 'get_product',
    operation: 'product',
    schema: ProductRequest,
    description:
      'One product in full, narrowed by option selections (selected, preferences), with availability on each option value.',
  },
];

const META = z.looseObject({
  'ucp-agent': z.looseObject({ profile: z.string().optional() }).optional(),
});

/** The tools as tools/list gives them: the catalog request under `catalog`, as UCP's MCP binding says. */
const TOOL_LIST = TOOLS.map((tool) => ({
  name: tool.name,
  description: tool.description,
  inputSchema: z.toJSONSchema(z.object({ meta: META.optional(), catalog: tool.schema }), {
    target: 'draft-2020-12',
    io: 'input',
  }),
}));

function error(id: JsonRpcId, code: number, message: string, status = 200): McpAnswer {
  return { status, body: jsonRpcError(id, code, message) };
}

function result(id: JsonRpcId, value: object, extra: Partial<McpAnswer> = {}): McpAnswer {
  return { status: 200, body: { jsonrpc: '2.0', id, result: value }, ...extra };
}

const isId = (v: unknown): v is string | number =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

function initializeResult(params: unknown) {
  const asked = (params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
  const protocolVersion =
    typeof asked === 'string' && MCP_PROTOCOL_VERSIONS.includes(asked)
      ? asked
      : MCP_PROTOCOL_VERSIONS[0]!;
  return {
    protocolVersion,
    capabilities: { tools: { listChanged: false } },
    serverInfo: { name: 'agentshelf-ucp-catalog', version: VERSION },
    instructions:
      "The UCP catalog of this store: search_catalog to find products by a shopper's words, lookup_catalog and get_product for ids it returned.",
  };
}

async function callTool(deps: CatalogDeps, id: JsonRpcId, params: unknown): Promise<McpAnswer> {
  const p = (typeof params === 'object' && params !== null ? params : {}) as {
    name?: unknown;
    arguments?: unknown;
  };
  const tool = TOOLS.find((t) => t.name === p.name);
  if (!tool) return error(id, INVALID_PARAMS, `Unknown tool: ${String(p.name).slice(0, 100)}`);
  const args = (typeof p.arguments === 'object' && p.arguments !== null ? p.arguments : {}) as {
    meta?: unknown;
    catalog?: unknown;
  };
  const meta = META.safeParse(args.meta ?? {});
  const profile = meta.success ? meta.data['ucp-agent']?.profile : undefined;
  try {
    if (args.catalog === undefined) throw new UcpRequestError('catalog', 'is required');
    const { response, call } = await runCatalogOperation(deps, tool.operation, args.catalog);
    return result(
      id,
      { content: [{ type: 'text', text: JSON.stringify(response) }], structuredContent: response },
      { call, ...(profile ? { agentProfile: profile } : {}) },
    );
  } catch (err) {
    if (!(err instanceof UcpRequestError)) throw err;
    const field =
      err.field && !err.field.startsWith('catalog') ? `catalog.${err.field}` : err.field;
    return error(id, INVALID_PARAMS, field ? `${field}: ${err.reason}` : err.reason);
  }
}

/** The id of a JSON-RPC request in a body, when the body is one that names it; else null. */
export function requestIdOf(raw: Buffer): JsonRpcId {
  try {
    const message: unknown = JSON.parse(raw.toString('utf8'));
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
    const id = (message as { id?: unknown }).id;
    return isId(id) ? id : null;
  } catch {
    return null;
  }
}

/** A Content-Type of application/json (parameters such as charset allowed), as MCP asks. */
export function isJsonContentType(header: string | undefined): boolean {
  return header?.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/** Answers one JSON-RPC message sent to the MCP endpoint. */
export async function answerMcp(deps: CatalogDeps, raw: Buffer): Promise<McpAnswer> {
  let message: unknown;
  try {
    message = JSON.parse(raw.toString('utf8'));
  } catch {
    return error(null, PARSE_ERROR, 'Parse error: the body is not valid JSON', 400);
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return error(null, INVALID_REQUEST, 'Invalid Request: one JSON-RPC message object', 400);
  }
  const m = message as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const id = isId(m.id) ? m.id : null;
  if (m.jsonrpc !== '2.0')
    return error(id, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', 400);
  if (m.method === undefined && ('result' in m || 'error' in m))
    return { status: 202, body: undefined };
  if (typeof m.method !== 'string')
    return error(id, INVALID_REQUEST, 'Invalid Request: method must be a string', 400);
  // A notification (no id) is acknowledged and needs no answer.
  if (!('id' in m)) return { status: 202, body: undefined };
  if (!isId(m.id))
    return error(null, INVALID_REQUEST, 'Invalid Request: id must be a string or a number', 400);
  switch (m.method) {
    case 'initialize':
      return result(id, initializeResult(m.params));
    case 'ping':
      return result(id, {});
    case 'tools/list':
      return result(id, { tools: TOOL_LIST });
    case 'tools/call':
      return callTool(deps, id, m.params);
    default:
      return error(id, METHOD_NOT_FOUND, `Method not found: ${m.method.slice(0, 100)}`);
  }
}

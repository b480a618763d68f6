import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { VERSION } from '../version.js';
import type { RouteDef } from './route.js';
import './schemas/index.js';

type JsonSchema = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';

/** Points every `#/$defs/<id>` reference at `#/components/schemas/<id>`, in place. */
function pointAtComponents(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) pointAtComponents(item);
  } else if (node !== null && typeof node === 'object') {
    const obj = node as JsonSchema;
    if (typeof obj.$ref === 'string' && obj.$ref.startsWith('#/$defs/')) {
      obj.$ref = COMPONENTS + obj.$ref.slice('#/$defs/'.length);
    }
    for (const value of Object.values(obj)) pointAtComponents(value);
  }
}

/**
 * The JSON Schema of a zod schema, as a piece of the OpenAPI document: described by
 * `apiDocs` (src/http/schemas), and with every schema that has an id there (and nothing
 * else) moved into `components` (the document's `components/schemas`) and referred to from
 * here. Local `$defs` would not resolve inside an OpenAPI document, so none are left.
 */
function toSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Record<string, JsonSchema>,
): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  pointAtComponents(json);
  for (const [id, def] of Object.entries(defs)) {
    if (id.startsWith('__schema')) {
      throw new Error(
        `a recursive schema has no id: give it one in apiDocs (src/http/schemas) to name it in components/schemas (${JSON.stringify(def).slice(0, 200)})`,
      );
    }
    pointAtComponents(def);
    if (components[id] !== undefined && !isDeepStrictEqual(components[id], def)) {
      throw new Error(
        `components/schemas/${id} would mean two schemas (a different one, or the same as ${io}): give each its own id`,
      );
    }
    components[id] = def;
  }
  return json;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function parametersOf(route: RouteDef, components: Record<string, JsonSchema>): unknown[] {
  const out: unknown[] = [];
  for (const [place, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input', components) as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      out.push({
        name,
        in: place,
        required: place === 'path' || (json.required ?? []).includes(name),
        ...(typeof prop.description === 'string' ? { description: prop.description } : {}),
        schema: prop,
      });
    }
  }
  if (route.idempotent) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Replays the first response for the same key and body within 24 hours; another body is 409',
      schema: { type: 'string', maxLength: 255 },
    });
  }
  return out;
}

/**
 * The OpenAPI 3.1 document, generated from the route definitions and the same zod schemas
 * that validate requests. docs/openapi.json is this document for BASE_URL http://localhost:8080.
 */
export function buildOpenApiDocument(
  routes: readonly RouteDef[],
  baseUrl: string,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, JsonSchema> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(route.responses)) {
      responses[status] = {
        description: res.description,
        ...(res.schema
          ? {
              content: {
                [res.contentType ?? 'application/json']: {
                  schema: toSchema(res.schema, 'output', components),
                },
              },
            }
          : {}),
      };
    }
    const parameters = parametersOf(route, components);
    (paths[openApiPath(route.path)] ??= {})[route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.permission === 'public'
        ? { security: [] }
        : {
            'x-permission':
              route.permission === 'read'
                ? 'read_only'
                : route.permission === 'write'
                  ? 'read_write'
                  : 'admin',
          }),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: toSchema(route.body, 'input', components) },
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agentshelf platform API',
      version: VERSION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'Products, feeds, webhooks and keys of an agentshelf store. Errors come in shape A by default; send `Prefer: envelope` for shape B. See docs/api.md.',
    },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
    components: {
      schemas: Object.fromEntries(
        Object.entries(components).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      ),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An agentshelf API key (ask_live_..., ask_test_..., ask_stg_...)',
        },
      },
    },
    paths,
  };
}

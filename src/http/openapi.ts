import { z } from 'zod';
import { VERSION } from '../version.js';
import type { RouteDef } from './route.js';

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function parametersOf(route: RouteDef): unknown[] {
  const out: unknown[] = [];
  for (const [place, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input') as {
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
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(route.responses)) {
      responses[status] = {
        description: res.description,
        ...(res.schema
          ? {
              content: {
                [res.contentType ?? 'application/json']: { schema: toSchema(res.schema, 'output') },
              },
            }
          : {}),
      };
    }
    const parameters = parametersOf(route);
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
              content: { 'application/json': { schema: toSchema(route.body, 'input') } },
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
      description:
        'Products, feeds, webhooks and keys of an agentshelf store. Errors come in shape A by default; send `Prefer: envelope` for shape B. See docs/decisions.md.',
    },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
    components: {
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

import fs from 'node:fs';
import { buildOpenApiDocument } from '../http/openapi.js';
import { allRoutes } from '../http/routes/index.js';
import { parseVerbArgs } from './args.js';

export const openapiHelp = `Usage: agentshelf openapi [--out FILE]

Prints the OpenAPI 3.1 document of the platform API (as served at /v1/openapi.json,
with the server http://localhost:8080), or writes it to FILE.`;

export const DOCS_BASE_URL = 'http://localhost:8080';

export async function runOpenapi(argv: string[]): Promise<number> {
  const { values } = parseVerbArgs(argv, { out: { type: 'string' } });
  if (values.help) {
    console.log(openapiHelp);
    return 0;
  }
  const text = `${JSON.stringify(buildOpenApiDocument(allRoutes, DOCS_BASE_URL), null, 2)}\n`;
  if (values.out) fs.writeFileSync(values.out, text);
  else process.stdout.write(text);
  return 0;
}

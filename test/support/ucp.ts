import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { URI, repoRoot } from './discovery.js';

/**
 * ajv (JSON Schema 2020-12) over every schema of UCP 2026-04-08 in vendor/ucp/schemas, so a
 * test checks a profile, a response or an error against the release's own definitions.
 */
export function loadUcpValidators() {
  const root = path.join(repoRoot(), 'vendor', 'ucp', 'schemas');
  // The schemas carry annotations ajv does not know (`name`): not strict about those.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajv.addFormat('uri', URI);
  ajv.addFormat(
    'date-time',
    (s: string) => !Number.isNaN(Date.parse(s)) && /T.*(Z|[+-]\d\d:\d\d)$/.test(s),
  );
  for (const file of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.json')) {
      ajv.addSchema(JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as object);
    }
  }
  const get = (ref: string): ValidateFunction => {
    const v = ajv.getSchema(`https://ucp.dev/schemas/${ref}`);
    if (!v) throw new Error(`no schema ${ref} in vendor/ucp`);
    return v;
  };
  return {
    /** The `ucp` member of a business profile. */
    businessUcp: get('ucp.json#/$defs/business_schema'),
    searchResponse: get('shopping/catalog_search.json#/$defs/search_response'),
    lookupResponse: get('shopping/catalog_lookup.json#/$defs/lookup_response'),
    productResponse: get('shopping/catalog_lookup.json#/$defs/get_product_response'),
    errorResponse: get('shopping/types/error_response.json'),
  };
}

/** The message of a validation just made: valid, or ajv's errors, readable in a failure. */
export function schemaErrors(validate: ValidateFunction): string {
  return validate.errors
    ? JSON.stringify(validate.errors, null, 1)
    : 'valid against the UCP schema';
}

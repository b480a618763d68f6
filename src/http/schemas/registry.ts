import { z } from 'zod';

/**
 * What the OpenAPI document says of a schema beyond its validation: a description, a JSON
 * Schema keyword that overrides the derived one (`type`), and `id`, which puts the schema
 * under `components/schemas/<id>` and refers to it from every place it is used.
 */
export type ApiMeta = z.GlobalMeta;

/**
 * The API's documentation, kept beside the domain's schemas rather than on them: the domain
 * validates, the HTTP layer says how the wire shows it (issue 10 part 1). Entries are keyed
 * by the schema instance the domain exports or nests, so the validation stays the domain's.
 * It is zod's global registry, the one `.meta()` writes to and `z.toJSONSchema` reads, so
 * schemas the HTTP layer declares itself can keep using `.meta()`.
 */
export const apiDocs = z.globalRegistry;

/** Documents one schema. */
export function doc<T extends z.ZodType>(schema: T, meta: ApiMeta | string): T {
  apiDocs.add(schema, typeof meta === 'string' ? { description: meta } : meta);
  return schema;
}

/** Documents fields of an object schema by name (and the object, if `meta` is given). */
export function docFields<T extends z.ZodObject>(
  schema: T,
  fields: { [K in keyof T['shape']]?: ApiMeta | string },
  meta?: ApiMeta | string,
): T {
  for (const [name, fieldMeta] of Object.entries(fields) as [string, ApiMeta | string][]) {
    const field = schema.shape[name];
    if (!field) throw new Error(`no field ${name} to document`);
    doc(field as z.ZodType, fieldMeta);
  }
  if (meta !== undefined) doc(schema, meta);
  return schema;
}

import { SourceError, type SourceContext, type SourceItem } from '../domain/integrations/source.js';
import { errorItem, isRecord, readLines, str } from './common.js';
import { asSourceError } from './origin.js';
import type { ShopifyAdmin } from './shopify-admin.js';
import {
  imageOfGraphqlMedia,
  itemsOfProduct,
  MEDIA_FIELDS,
  PRODUCT_FIELDS,
  VARIANT_FIELDS,
  viewOfGraphqlProduct,
  viewOfGraphqlVariant,
  type ProductView,
} from './shopify-map.js';

/**
 * Large catalogues through a bulk operation: `bulkOperationRunQuery` starts an export of
 * every product with its media and variants, `currentBulkOperation` is polled until
 * COMPLETED, and the JSONL file at its `url` is streamed line by line. Shopify writes each
 * product's line before its children's (variants and media, carrying `__parentId`), so only
 * the product being read is held: it is flushed when the next product's line arrives.
 */

export const BULK_QUERY = `{
  products {
    edges {
      node {
        ${PRODUCT_FIELDS}
        media { edges { node { id ${MEDIA_FIELDS} } } }
        variants { edges { node { ${VARIANT_FIELDS} } } }
      }
    }
  }
}`;

const RUN = `mutation RunBulk($query: String!) {
  bulkOperationRunQuery(query: $query) {
    bulkOperation { id status }
    userErrors { field message }
  }
}`;

const POLL = `query PollBulk {
  currentBulkOperation(type: QUERY) { id status errorCode objectCount rootObjectCount url partialDataUrl }
}`;

/** The longest a bulk operation may run before the sync gives up on it. */
const MAX_BULK_MS = 12 * 3600 * 1000;
/** The bulk file is streamed; this only stops a runaway answer (10 GiB). */
const MAX_BULK_BYTES = 10 * 1024 ** 3;

export async function* bulkItems(
  admin: ShopifyAdmin,
  ctx: SourceContext,
  currency: string,
): AsyncGenerator<SourceItem> {
  const url = await runBulkOperation(admin, ctx);
  if (url === null) return; // no products: Shopify writes no file
  let res;
  try {
    res = await ctx.http.request({ url, maxBytes: MAX_BULK_BYTES, timeoutMs: 120_000 });
  } catch (err) {
    throw asSourceError(err);
  }
  if (res.status !== 200) {
    res.discard();
    throw new SourceError(`the bulk operation's file answered HTTP ${res.status}`);
  }
  let current: { gid: string; view: ProductView } | null = null;
  let lineNumber = 0;
  try {
    for await (const line of readLines(res.body)) {
      lineNumber++;
      let row: unknown;
      try {
        row = JSON.parse(line.text);
      } catch {
        // Shopify ends every line, the last too: a last line without its end that is not
        // JSON is a file cut short, and the whole run fails (nothing is applied).
        if (!line.ended)
          throw new SourceError(
            `the bulk operation's file is cut short: its last line (line ${lineNumber}) has no line end and is not whole JSON`,
          );
        yield errorItem(null, 'line', `line ${lineNumber} of the bulk file is not JSON`);
        continue;
      }
      if (!isRecord(row)) continue;
      const parent = str(row.__parentId);
      if (parent === undefined) {
        if (current) yield* itemsOfProduct(current.view, currency);
        current = { gid: str(row.id) ?? '', view: viewOfGraphqlProduct(row) };
      } else if (!current || parent !== current.gid) {
        yield errorItem(
          null,
          'line',
          `line ${lineNumber} of the bulk file belongs to ${parent}, which is not the product being read`,
        );
      } else if ((str(row.id) ?? '').includes('/ProductVariant/')) {
        current.view.variants.push(viewOfGraphqlVariant(row));
      } else {
        const image = imageOfGraphqlMedia(row);
        if (image) current.view.images.push(image);
      }
    }
  } catch (err) {
    throw asSourceError(err);
  }
  if (current) yield* itemsOfProduct(current.view, currency);
}

const CURRENT = `query CurrentBulk {
  currentBulkOperation(type: QUERY) { id status query }
}`;

const squeeze = (query: string) => query.replace(/\s+/g, ' ').trim();

/** The running bulk export, when it runs our query (left by a run that was stopped). */
async function runningExportOfOurs(admin: ShopifyAdmin): Promise<string | undefined> {
  const data = await admin.query(CURRENT, {}, { cost: 1 });
  const op = isRecord(data.currentBulkOperation) ? data.currentBulkOperation : null;
  if (!op || (op.status !== 'CREATED' && op.status !== 'RUNNING')) return undefined;
  return squeeze(str(op.query) ?? '') === squeeze(BULK_QUERY) ? str(op.id) : undefined;
}

/** Starts the export and polls until it completes; answers the file's URL (null: empty). */
async function runBulkOperation(admin: ShopifyAdmin, ctx: SourceContext): Promise<string | null> {
  const started = await admin.query(RUN, { query: BULK_QUERY }, { mutation: true });
  const run = isRecord(started.bulkOperationRunQuery) ? started.bulkOperationRunQuery : {};
  const userErrors = Array.isArray(run.userErrors) ? run.userErrors.filter(isRecord) : [];
  let id = isRecord(run.bulkOperation) ? str(run.bulkOperation.id) : undefined;
  if (userErrors.length > 0) {
    const message = userErrors.map((e) => str(e.message)).join('; ');
    // One bulk query at a time per app and shop: a run that was killed leaves its export
    // running. When it is ours (the same query), this run waits for it instead.
    id = /already in progress/i.test(message) ? await runningExportOfOurs(admin) : undefined;
    if (!id) throw new SourceError(`Shopify did not start the bulk export: ${message}`);
    ctx.logger.info({ integration: ctx.integrationId, id }, 'shopify bulk operation adopted');
  }
  if (!id) throw new SourceError('Shopify started no bulk operation');
  const pollMs = Math.max(0, Number(ctx.settings.bulk_poll_seconds ?? 5) * 1000) || 5000;
  const deadline = ctx.now().getTime() + MAX_BULK_MS;
  for (;;) {
    try {
      await ctx.sleep(pollMs);
    } catch {
      throw new SourceError('the sync was stopped');
    }
    const data = await admin.query(POLL, {}, { cost: 1 });
    const op = isRecord(data.currentBulkOperation) ? data.currentBulkOperation : null;
    if (!op || str(op.id) !== id)
      throw new SourceError('the bulk operation was replaced by another one before it finished');
    const status = str(op.status);
    if (status === 'COMPLETED') return str(op.url) ?? null;
    if (
      status === 'FAILED' ||
      status === 'CANCELED' ||
      status === 'CANCELING' ||
      status === 'EXPIRED'
    )
      throw new SourceError(
        `the bulk operation ended ${status}${op.errorCode ? ` (${str(op.errorCode)})` : ''}`,
      );
    if (ctx.now().getTime() > deadline)
      throw new SourceError('the bulk operation ran for over 12 hours');
    ctx.logger.debug(
      { integration: ctx.integrationId, status, objects: op.objectCount },
      'shopify bulk operation running',
    );
  }
}

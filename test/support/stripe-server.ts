/**
 * A local Stripe for tests: the Product Catalog Import API v2 as Stripe documents it
 * (docs.stripe.com/api/v2/commerce/product-catalog-imports, 2026-06-24.dahlia; the upload as
 * docs.stripe.com/agentic-commerce/for-sellers/custom shows it):
 *
 * - `POST /v2/commerce/product_catalog/imports` `{feed_type, mode, metadata}`: a secret key
 *   (Bearer) and a `Stripe-Version` are required; the answer is the import `awaiting_upload`
 *   with `status_details.awaiting_upload.upload_url {url, expires_at}`. The same
 *   `Idempotency-Key` answers the same import.
 * - `PUT <upload_url>` with the CSV (`Content-Type: text/csv`), as to a pre-signed URL: no key.
 *   The import turns `processing`; after `processingReads` status reads it ends: `failed`
 *   (`invalid_file`) when the header lacks Stripe's required columns, `succeeded_with_errors`
 *   (counts, `samples`) when rows break the spec's rules, else `succeeded`. The catalog takes
 *   the rows as the mode says (replace: the file is the catalog; upsert: add and update;
 *   `delete=true` removes a product).
 * - `GET /v2/commerce/product_catalog/imports/:id` and the list.
 * - On each ending, the thin event Stripe sends (`v2.commerce.product_catalog.imports.*`,
 *   `related_object.url`), signed as Stripe signs (`Stripe-Signature: t=...,v1=...`, HMAC-SHA256
 *   of `t.body` with the destination's `whsec_` secret), to `events.url` when one is set.
 *
 * Errors as Stripe answers them: `{"error": {"type", "code", "message"}}`, 401 for a wrong key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import type { Test } from 'tap';

const IMPORTS = '/v2/commerce/product_catalog/imports';
/** The columns Stripe's product feed spec requires (docs.stripe.com/agentic-commerce/product-feed). */
export const REQUIRED_COLUMNS = [
  'id',
  'title',
  'description',
  'link',
  'image_link',
  'price',
  'availability',
];
const AVAILABILITY = new Set(['in_stock', 'out_of_stock', 'preorder', 'backorder']);

interface Import {
  id: string;
  object: 'v2.commerce.product_catalog_import';
  created: string;
  feed_type: string;
  mode: string;
  livemode: false;
  metadata: Record<string, string>;
  status: string;
  status_details: Record<string, unknown>;
  /** Not in Stripe's answer: the ending computed on upload, shown after the reads. */
  ending?: { status: string; details: Record<string, unknown> };
  reads: number;
}

export interface StripeServer {
  url: string;
  /** The products the catalog holds, by id (the CSV's rows as records). */
  catalog: Map<string, Record<string, string>>;
  imports: Import[];
  /** Bytes received by uploads, in all. */
  uploadedBytes: number;
  /** Requests received: method and path (no query). */
  requests: { method: string; path: string; status: number }[];
  /** Status reads that answer `processing` before an upload's import ends (default 0). */
  processingReads: number;
  /** Answers the next `n` import creations with this status and Stripe's error body. */
  failNextCreate(n: number, status: number): void;
  /** Ends a processing import now, and sends its event (an import that took a while). */
  finish(importId: string): Promise<void>;
  /** Ends the next `n` uploaded imports `failed` (`internal_error`, a transient failure). */
  failNextImport(n: number): void;
  /** Where the import events go, and the secret that signs them. */
  events?: { url: string; secret: string };
  /** Events sent: their types and the answer's status. */
  sentEvents: { type: string; status: number }[];
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function stripeError(
  res: http.ServerResponse,
  status: number,
  message: string,
  code?: string,
): void {
  send(res, status, {
    error: { type: 'invalid_request_error', ...(code ? { code } : {}), message },
  });
}

/** An import that ends `failed` (Stripe's `status_details.failed`). */
function failedEnding(
  code: 'invalid_file' | 'internal_error',
  message: string,
): NonNullable<Import['ending']> {
  const type = code === 'invalid_file' ? 'cannot_proceed' : 'transient_failure';
  return { status: 'failed', details: { failed: { code, type, failure_message: message } } };
}

/** Checks the CSV's rows as Stripe's spec states its rules: the import's ending. */
function judge(csv: string): {
  ending: Import['ending'];
  rows: Record<string, string>[];
} {
  let rows: Record<string, string>[];
  try {
    rows = parse(csv, { columns: true, bom: true }) as Record<string, string>[];
  } catch (err) {
    const message = `The file is not CSV: ${(err as Error).message}`;
    return { ending: failedEnding('invalid_file', message), rows: [] };
  }
  const header = csv.split(/\r?\n/, 1)[0]!.split(',');
  const missing = REQUIRED_COLUMNS.filter((c) => !header.includes(c));
  if (missing.length > 0) {
    const message = `Missing required columns: ${missing.join(', ')}`;
    return { ending: failedEnding('invalid_file', message), rows: [] };
  }
  const samples: { error_message: string; field: string; id: string; row: string }[] = [];
  const good: Record<string, string>[] = [];
  for (const [i, row] of rows.entries()) {
    const wrong = (field: string, message: string) =>
      samples.push({ error_message: message, field, id: row.id ?? '', row: String(i + 2) });
    if (row.delete === 'true') {
      good.push(row);
      continue;
    }
    const blank = REQUIRED_COLUMNS.find((c) => !row[c]?.trim());
    if (blank) wrong(blank, `${blank} is required`);
    else if (!/^\d+(\.\d{1,3})? [A-Z]{3}$/.test(row.price!))
      wrong('price', 'price must be an amount and an ISO 4217 currency, such as 79.99 USD');
    else if (!AVAILABILITY.has(row.availability!))
      wrong(
        'availability',
        'availability is not one of in_stock, out_of_stock, preorder, backorder',
      );
    else if (!/^https?:\/\//.test(row.link!)) wrong('link', 'link must be an http(s) URL');
    else good.push(row);
  }
  const success = String(good.length);
  return {
    ending:
      samples.length === 0
        ? { status: 'succeeded', details: { succeeded: { success_count: success } } }
        : {
            status: 'succeeded_with_errors',
            details: {
              succeeded_with_errors: {
                success_count: success,
                error_count: String(samples.length),
                samples: samples.slice(0, 10),
                error_file: {
                  content_type: 'text/csv',
                  size: '0',
                  download_url: {
                    url: 'https://files.stripe.test/errors.csv',
                    expires_at: new Date(Date.now() + 300_000).toISOString(),
                  },
                },
              },
            },
          },
    rows: good,
  };
}

export async function startStripeServer(t: Test, options: { key: string }): Promise<StripeServer> {
  const imports = new Map<string, Import>();
  const byIdempotencyKey = new Map<string, Import>();
  const uploads = new Map<string, Import>();
  let failing = { n: 0, status: 500 };
  let failingImports = 0;
  let base = '';
  const state: StripeServer = {
    url: '',
    catalog: new Map(),
    imports: [],
    uploadedBytes: 0,
    requests: [],
    processingReads: 0,
    failNextCreate: (n, status) => {
      failing = { n, status };
    },
    failNextImport: (n) => {
      failingImports = n;
    },
    sentEvents: [],
    finish: async (importId) => {
      const imp = imports.get(importId);
      if (!imp?.ending || imp.status !== 'processing')
        throw new Error(`${importId} is not processing`);
      await end(imp);
    },
  };

  const present = (imp: Import) => {
    const { ending: _ending, reads: _reads, ...shown } = imp;
    return shown;
  };

  const end = async (imp: Import) => {
    imp.status = imp.ending!.status;
    imp.status_details = imp.ending!.details;
    const events = state.events;
    if (!events) return;
    const body = JSON.stringify({
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'v2.core.event',
      type: `v2.commerce.product_catalog.imports.${imp.status}`,
      created: new Date().toISOString(),
      livemode: false,
      reason: null,
      related_object: {
        id: imp.id,
        type: 'v2.commerce.product_catalog.imports',
        url: `${IMPORTS}/${imp.id}`,
      },
      changes: { before: { status: 'PROCESSING' }, after: { status: imp.status.toUpperCase() } },
      data: {},
    });
    const stamp = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', events.secret).update(`${stamp}.${body}`).digest('hex');
    const res = await fetch(events.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': `t=${stamp},v1=${signature}`,
      },
      body,
    });
    await res.arrayBuffer();
    state.sentEvents.push({
      type: `v2.commerce.product_catalog.imports.${imp.status}`,
      status: res.status,
    });
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer) => {
    const path = (req.url ?? '').split('?')[0]!;
    const upload = /^\/files\/upload\/([a-z0-9]+)$/.exec(path);
    if (upload) {
      const imp = uploads.get(upload[1]!);
      if (req.method !== 'PUT') return stripeError(res, 405, 'PUT the file to the upload URL');
      if (!imp || imp.status !== 'awaiting_upload')
        return stripeError(res, 403, 'The upload URL is not valid or has expired');
      uploads.delete(upload[1]!);
      state.uploadedBytes += raw.length;
      const judged = judge(raw.toString('utf8'));
      const { rows } = judged;
      let ending = judged.ending;
      if (failingImports > 0) {
        failingImports--;
        ending = failedEnding(
          'internal_error',
          'An internal error occurred while processing the file.',
        );
      }
      imp.ending = ending;
      imp.status = 'processing';
      imp.status_details = { processing: { success_count: '0', error_count: '0' } };
      if (ending!.status !== 'failed') {
        if (imp.mode === 'replace') state.catalog.clear();
        for (const row of rows) {
          if (row.delete === 'true') state.catalog.delete(row.id!);
          else state.catalog.set(row.id!, row);
        }
      }
      if (state.processingReads === 0) await end(imp);
      res.writeHead(200).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${options.key}`) {
      const given = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      return stripeError(
        res,
        401,
        `Invalid API Key provided: ${given.slice(0, 8)}****${given.slice(-4)}`,
      );
    }
    if (!req.headers['stripe-version']) {
      return stripeError(res, 400, 'The Stripe-Version header is required for /v2 endpoints.');
    }
    if (path === IMPORTS && req.method === 'POST') {
      if (failing.n > 0) {
        failing.n--;
        return stripeError(
          res,
          failing.status,
          'An error occurred with our connection to Stripe.',
          'api_error',
        );
      }
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string' && byIdempotencyKey.has(key))
        return send(res, 200, present(byIdempotencyKey.get(key)!));
      let body: { feed_type?: unknown; mode?: unknown; metadata?: unknown };
      try {
        body = JSON.parse(raw.toString('utf8')) as typeof body;
      } catch {
        return stripeError(res, 400, 'Invalid JSON body.');
      }
      if (!['inventory', 'pricing', 'product', 'promotion'].includes(body.feed_type as string)) {
        return stripeError(
          res,
          400,
          'Invalid feed_type: must be one of inventory, pricing, product or promotion',
          'parameter_invalid',
        );
      }
      if (!['replace', 'upsert'].includes(body.mode as string)) {
        return stripeError(
          res,
          400,
          'Invalid mode: must be one of replace or upsert',
          'parameter_invalid',
        );
      }
      const token = randomBytes(12).toString('hex');
      const imp: Import = {
        id: `pcimprt_test_${randomBytes(16).toString('hex')}`,
        object: 'v2.commerce.product_catalog_import',
        created: new Date().toISOString(),
        feed_type: body.feed_type as string,
        mode: body.mode as string,
        livemode: false,
        metadata: (body.metadata ?? {}) as Record<string, string>,
        status: 'awaiting_upload',
        status_details: {
          awaiting_upload: {
            upload_url: {
              url: `${base}/files/upload/${token}`,
              expires_at: new Date(Date.now() + 3_600_000).toISOString(),
            },
          },
        },
        reads: 0,
      };
      imports.set(imp.id, imp);
      uploads.set(token, imp);
      state.imports.push(imp);
      if (typeof key === 'string') byIdempotencyKey.set(key, imp);
      return send(res, 200, present(imp));
    }
    if (path === IMPORTS && req.method === 'GET') {
      return send(res, 200, {
        data: [...imports.values()].reverse().map(present),
        next_page_url: null,
        previous_page_url: null,
      });
    }
    const one = new RegExp(`^${IMPORTS}/([^/]+)$`).exec(path);
    if (one && req.method === 'GET') {
      const imp = imports.get(decodeURIComponent(one[1]!));
      if (!imp)
        return stripeError(
          res,
          404,
          `No such product_catalog_import: '${one[1]}'`,
          'resource_missing',
        );
      if (imp.status === 'processing' && imp.ending && ++imp.reads >= state.processingReads)
        await end(imp);
      return send(res, 200, present(imp));
    }
    return stripeError(res, 404, `Unrecognized request URL (${req.method}: ${path}).`);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks))
        .catch((err: unknown) => stripeError(res, 500, String(err)))
        .finally(() =>
          state.requests.push({
            method: req.method ?? '',
            path: (req.url ?? '').split('?')[0]!,
            status: res.statusCode,
          }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.url = base;
  return state;
}

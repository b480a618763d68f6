/**
 * The floor of the API benchmark: a bare Koa route doing the same reads as agentshelf, with
 * nothing else (no auth, limits, audit, request ids or validation), as the baseline's
 * `servers.mjs koa-route` (shared/bench-baseline.md). It opens the store's SQLite file read
 * only and answers GET /v1/products/:id and GET /v1/products?limit=N with the rows' JSON
 * columns parsed, as the baseline does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import Koa from 'koa';
import Router from '@koa/router';

const file = process.argv[2];
if (!file) throw new Error('usage: koa-route.js <store.sqlite>');
const db = new Database(file, { readonly: true });
db.pragma('cache_size = -32000');
const byId = db.prepare('select * from products where id = ?');
const page = db.prepare('select * from products order by created_at, id limit ? offset ?');

type Row = Record<string, unknown> & { images: string; attributes: string };
const parsed = (row: Row) => ({
  ...row,
  images: JSON.parse(row.images) as unknown,
  attributes: JSON.parse(row.attributes) as unknown,
});

const router = new Router();
router.get('/v1/products/:id', (ctx) => {
  const row = byId.get(ctx.params.id) as Row | undefined;
  if (!row) return;
  ctx.body = parsed(row);
});
router.get('/v1/products', (ctx) => {
  const limit = Number(ctx.query.limit ?? 50);
  const offset = Number(ctx.query.offset ?? 0);
  ctx.body = { products: (page.all(limit, offset) as Row[]).map(parsed) };
});

const app = new Koa();
app.use(router.routes());
const server = http.createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

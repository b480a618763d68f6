import type Koa from 'koa';
import {
  createProduct,
  deleteProduct,
  getProductJson,
  listProductsJson,
  updateProduct,
} from '../../domain/products/products.js';
import {
  PRODUCT_STATUSES,
  ProductCreate,
  ProductUpdate,
  type Product,
} from '../../domain/products/schemas.js';
import { ProductListQueryString } from '../../http/schemas/products.js';
import { parseInput } from '../../http/validate.js';
import { AppError } from '../../errors.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, listPager, table, type Viewer } from '../layout.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';
import { attributeFields, attributesOf, attributeValues } from './product-attributes.js';

const PATH = '/dashboard/products';

function productPath(id: string): string {
  return `${PATH}/${encodeURIComponent(id)}`;
}

/** The form's fields as the API's JSON input: empty optional fields are left out. */
function inputOf(form: Record<string, string>, creating: boolean): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  if (creating && form.id) input.id = form.id;
  if (creating || form.name !== undefined) input.name = form.name ?? '';
  for (const name of ['description', 'currency', 'status', 'category'] as const) {
    if (form[name]) input[name] = form[name];
  }
  // On an edit, emptying the description or the category clears it (the API takes null).
  if (!creating) {
    for (const name of ['description', 'category'] as const) {
      if (form[name] === '') input[name] = null;
    }
  }
  const price = (form.price ?? '').trim();
  if (creating || price !== '')
    input.price =
      price !== '' && Number.isFinite(Number(price))
        ? Number(price)
        : price === ''
          ? undefined
          : price;
  const images = (form.images ?? '')
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (images.length > 0 || !creating) input.images = images;
  // Replaced whole on an edit (as the API does), so a field emptied is an attribute removed; a
  // post without the attribute fields at all (not this form's) leaves them as they are.
  if ('attr_other' in form) {
    const attributes = attributesOf(form);
    if (!creating || Object.keys(attributes).length > 0) input.attributes = attributes;
  }
  return input;
}

function productForm(
  viewer: Viewer,
  action: string,
  values: Record<string, string>,
  error: AppError | undefined,
  creating: boolean,
): Html {
  const errorOf = (name: string) =>
    error &&
    (error.field === name ||
      error.field?.startsWith(`${name}[`) ||
      error.field?.startsWith(`${name}.`))
      ? error.message
      : undefined;
  const known = [
    'id',
    'name',
    'description',
    'price',
    'currency',
    'status',
    'category',
    'images',
    'attributes',
  ];
  const other = error && !known.some((k) => errorOf(k)) ? error.message : undefined;
  return markup`<form class="box" method="post" action="${action}" novalidate>
    ${csrfField(viewer)}
    ${other ? markup`<div class="error" role="alert">${other}</div>` : error ? markup`<div class="error" role="alert">Please correct the field marked below.</div>` : ''}
    ${creating ? field({ name: 'id', label: 'Id (SKU)', value: values.id, error: errorOf('id'), hint: 'Optional: generated when empty' }) : ''}
    ${field({ name: 'name', label: 'Name', value: values.name, error: errorOf('name'), required: true })}
    ${field({ name: 'description', label: 'Description', value: values.description, error: errorOf('description'), textarea: true })}
    ${field({ name: 'price', label: 'Price', value: values.price, error: errorOf('price'), required: true, hint: 'e.g. 79.99' })}
    ${field({ name: 'currency', label: 'Currency', value: values.currency, error: errorOf('currency'), hint: 'ISO 4217, e.g. USD; empty: the store default' })}
    ${field({ name: 'status', label: 'Status', value: values.status ?? 'active', options: PRODUCT_STATUSES, error: errorOf('status') })}
    ${field({ name: 'category', label: 'Category', value: values.category, error: errorOf('category'), hint: 'e.g. Apparel > Shoes' })}
    ${field({ name: 'images', label: 'Image URLs (one a line)', value: values.images, error: errorOf('images'), textarea: true })}
    ${attributeFields(values, errorOf)}
    <button type="submit">${creating ? 'Create product' : 'Save changes'}</button>
  </form>`;
}

function valuesOf(p: Product): Record<string, string> {
  return {
    name: p.name,
    description: p.description ?? '',
    price: String(p.price),
    currency: p.currency,
    status: p.status,
    category: p.category ?? '',
    images: p.images.join('\n'),
    ...attributeValues(p.attributes),
  };
}

async function loadProduct(dash: DashContext, id: string): Promise<Product> {
  return JSON.parse((await getProductJson(dash.deps.db, id)).toString('utf8')) as Product;
}

/**
 * A product's images: https ones previewed (loaded from the merchant's image host, with no
 * referrer), each linking to its file; every address written out below them.
 */
function imagePreviews(p: Product): Html {
  const secure = p.images.filter((u) => u.startsWith('https://'));
  return markup`${
    secure.length === 0
      ? ''
      : markup`<div class="thumbs">
          ${secure.map(
            (u, i) =>
              markup`<a href="${u}" rel="noreferrer"><img src="${u}" alt="${p.name}, image ${i + 1}" width="96" height="96" loading="lazy" decoding="async" referrerpolicy="no-referrer" /></a>`,
          )}
        </div>`
  }${p.images.map((u) => markup`<a href="${u}" rel="noreferrer">${u}</a><br />`)}`;
}

function idOf(ctx: Koa.Context): string {
  return String(ctx.params.id);
}

export const productPages: DashRoute[] = [
  {
    method: 'get',
    path: PATH,
    permission: 'read',
    handler: async (ctx, dash) => {
      // `deleted` is the notice after a delete, not a filter.
      const { deleted, ...query } = queryOf(ctx);
      let body: Html;
      try {
        const { limit, offset, ...filter } = parseInput(
          ProductListQueryString,
          { limit: '50', ...query },
          'query',
        );
        const list = JSON.parse(
          (await listProductsJson(dash.deps.db, filter, { limit, offset })).toString('utf8'),
        ) as { products: Product[]; pagination: { total: number; has_more: boolean } };
        const link = (o: number) =>
          `${PATH}?${new URLSearchParams({ ...query, offset: String(Math.max(0, o)) }).toString()}`;
        body =
          list.products.length === 0
            ? markup`<div class="box">
                <p>
                  No products${filter.category || filter.status || filter.brand ? ' match these filters' : ' yet'}.
                </p>
                ${canWrite(dash.viewer) ? markup`<p><a class="button" href="${PATH}/new">Add a product</a>, connect a store under Integrations, or import a file with <code>agentshelf import</code>.</p>` : ''}
              </div>`
            : markup`${table(
                ['Name', 'Price', 'Brand', 'Status', 'Category', 'Updated'],
                list.products.map((p) => [
                  markup`<a href="${productPath(p.id)}">${p.name}</a><br /><code class="muted"
                        >${p.id}</code
                      >`,
                  dash.fmt.money(p.price, p.currency),
                  typeof p.attributes.brand === 'string' ? p.attributes.brand : '',
                  p.status,
                  p.category ?? '',
                  dash.fmt.when(p.updated_at),
                ]),
              )}
                ${listPager({ ...list.pagination, offset }, { shown: list.products.length, pageSize: limit, link, fmt: dash.fmt })}`;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        body = markup`<div class="error" role="alert">${err.message}</div>`;
      }
      dash.render(
        'Products',
        PATH,
        markup`${deleted ? markup`<div class="notice" role="status">Product deleted.</div>` : ''}
          ${canWrite(dash.viewer) ? markup`<p><a class="button" href="${PATH}/new">Add a product</a></p>` : ''}
          <form class="box filters" method="get" action="${PATH}">
            <div>
              ${field({ name: 'category', label: 'Category (and below)', value: query.category })}
            </div>
            <div>${field({ name: 'brand', label: 'Brand', value: query.brand })}</div>
            <div>
              ${field({ name: 'status', label: 'Status', value: query.status ?? '', options: ['', ...PRODUCT_STATUSES] })}
            </div>
            <div>
              ${field({ name: 'limit', label: 'Per page', value: query.limit ?? '50', type: 'number' })}
            </div>
            <div><button type="submit">Filter</button></div>
          </form>
          ${body}`,
      );
    },
  },
  {
    method: 'get',
    path: `${PATH}/new`,
    permission: 'write',
    handler: async (_ctx, dash) =>
      dash.render('New product', PATH, productForm(dash.viewer, PATH, {}, undefined, true)),
  },
  {
    method: 'post',
    path: PATH,
    permission: 'write',
    handler: async (ctx, dash) => {
      const { deps, form } = dash;
      try {
        const input = parseInput(ProductCreate, inputOf(form, true), 'body');
        const product = await createProduct(
          deps.db,
          input,
          { currency: deps.config.DEFAULT_CURRENCY },
          deps.now(),
        );
        ctx.status = 303;
        ctx.redirect(`${productPath(product.id)}?created=1`);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        dash.render('New product', PATH, productForm(dash.viewer, PATH, form, err, true), 422);
      }
    },
  },
  {
    method: 'get',
    path: `${PATH}/:id`,
    permission: 'read',
    handler: async (ctx, dash) => {
      const p = await loadProduct(dash, idOf(ctx));
      const query = queryOf(ctx);
      const notice = query.created
        ? 'Product created.'
        : query.saved
          ? 'Changes saved.'
          : undefined;
      dash.render(
        p.name,
        PATH,
        markup`${notice ? markup`<div class="notice" role="status">${notice}</div>` : ''}
          <div class="box">
            <dl>
              <dt>Id</dt>
              <dd><code>${p.id}</code></dd>
              <dt>Price</dt>
              <dd>${dash.fmt.money(p.price, p.currency)}</dd>
              <dt>Status</dt>
              <dd>${p.status}</dd>
              <dt>Category</dt>
              <dd>${p.category ?? '—'}</dd>
              <dt>Description</dt>
              <dd>${p.description ?? '—'}</dd>
              <dt>Images</dt>
              <dd>
                ${p.images.length === 0 ? '—' : imagePreviews(p)}
              </dd>
              <dt>Attributes</dt>
              <dd>
                ${
                  Object.keys(p.attributes).length === 0
                    ? '—'
                    : markup`<dl class="attributes">
                        ${Object.entries(p.attributes).map(
                          ([k, v]) =>
                            markup`<dt>${k}</dt>
                              <dd>${Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(', ') : typeof v === 'string' ? v : JSON.stringify(v)}</dd>`,
                        )}
                      </dl>`
                }
              </dd>
              <dt>Updated</dt>
              <dd>${dash.fmt.when(p.updated_at)}</dd>
            </dl>
          </div>
          ${
            canWrite(dash.viewer)
              ? markup`<h2>Edit</h2>
                  ${productForm(dash.viewer, productPath(p.id), valuesOf(p), undefined, false)}
                  <form method="post" action="${productPath(p.id)}/delete">
                    ${csrfField(dash.viewer)}<button class="danger" type="submit">
                      Delete product
                    </button>
                  </form>`
              : ''
          }
          <p><a href="${PATH}">All products</a></p>`,
      );
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id`,
    permission: 'write',
    handler: async (ctx, dash) => {
      const id = idOf(ctx);
      const { deps, form } = dash;
      try {
        const input = parseInput(ProductUpdate, inputOf(form, false), 'body');
        await updateProduct(deps.db, id, input, deps.now());
        ctx.status = 303;
        ctx.redirect(`${productPath(id)}?saved=1`);
      } catch (err) {
        if (!(err instanceof AppError) || err.kind === 'not_found') throw err;
        const p = await loadProduct(dash, id);
        dash.render(
          p.name,
          PATH,
          markup`<h2>Edit</h2>
            ${productForm(dash.viewer, productPath(id), form, err, false)}
            <p><a href="${productPath(id)}">Cancel</a></p>`,
          422,
        );
      }
    },
  },
  {
    method: 'post',
    path: `${PATH}/:id/delete`,
    permission: 'write',
    handler: async (ctx, dash) => {
      await deleteProduct(dash.deps.db, idOf(ctx), dash.deps.now());
      ctx.status = 303;
      ctx.redirect(`${PATH}?deleted=1`);
    },
  },
];

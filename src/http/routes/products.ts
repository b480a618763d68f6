import { z } from 'zod';
import {
  createProduct,
  deleteProduct,
  getProductJson,
  listProductsJson,
  updateProduct,
} from '../../domain/products/products.js';
import {
  Product,
  ProductCreate,
  ProductList,
  ProductUpdate,
} from '../../domain/products/schemas.js';
import { defineRoute, JsonBytes } from '../route.js';
import { ProductListQueryString } from '../schemas/products.js';
import { ErrorResponses } from './shared.js';

const IdParams = z.object({ id: z.string().min(1).max(200) });

export const productRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/products',
    operationId: 'listProducts',
    summary:
      'List products, newest last, filtered by category (and everything below it) and status',
    tag: 'Products',
    permission: 'read',
    query: ProductListQueryString,
    responses: {
      200: { description: 'A page of products', schema: ProductList },
      ...ErrorResponses,
    },
    handler: async ({ query }, { db }) => {
      const { limit, offset, ...filter } = query;
      return { body: new JsonBytes(await listProductsJson(db, filter, { limit, offset })) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/products/:id',
    operationId: 'getProduct',
    summary: 'Get one product',
    tag: 'Products',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'The product', schema: Product }, ...ErrorResponses },
    handler: async ({ params }, { db }) => ({
      body: new JsonBytes(await getProductJson(db, params.id)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/products',
    operationId: 'createProduct',
    summary: 'Create a product (records product.created)',
    tag: 'Products',
    permission: 'write',
    body: ProductCreate,
    idempotent: true,
    responses: { 201: { description: 'The new product', schema: Product }, ...ErrorResponses },
    handler: async ({ body }, deps) => {
      const product = await createProduct(
        deps.db,
        body,
        { currency: deps.config.DEFAULT_CURRENCY },
        deps.now(),
      );
      return {
        status: 201,
        body: product,
        headers: { Location: `/v1/products/${encodeURIComponent(product.id)}` },
      };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/v1/products/:id',
    operationId: 'updateProduct',
    summary:
      'Change the fields given (attributes, when given, is replaced whole); records product.updated',
    tag: 'Products',
    permission: 'write',
    params: IdParams,
    body: ProductUpdate,
    responses: { 200: { description: 'The updated product', schema: Product }, ...ErrorResponses },
    handler: async ({ params, body }, deps) => {
      const product = await updateProduct(deps.db, params.id, body, deps.now());
      return { body: product };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/products/:id',
    operationId: 'deleteProduct',
    summary: 'Delete a product (records product.deleted with its last state)',
    tag: 'Products',
    permission: 'write',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, ...ErrorResponses },
    handler: async ({ params }, deps) => {
      await deleteProduct(deps.db, params.id, deps.now());
      return { status: 204 };
    },
  }),
];

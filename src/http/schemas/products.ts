import {
  Attributes,
  Pagination,
  Product,
  ProductCreate,
  ProductListQuery,
} from '../../domain/products/schemas.js';
import { doc, docFields } from './registry.js';
import { pageQuery } from './shared.js';

/** The product list's query string: the domain's filter, with numbers read from text. */
export const ProductListQueryString = ProductListQuery.extend(pageQuery);

docFields(ProductCreate, {
  id: "The merchant's own id (SKU); generated as prod_... when absent",
  price: { description: 'Decimal amount in the currency, e.g. 79.99', type: 'number' },
});
docFields(
  Attributes,
  {
    url: 'The product page on the store',
    item_group_id: 'Products sharing it are variants of one product',
  },
  'brand, features and further known keys; other keys are kept as given',
);
doc(Product, { id: 'Product', description: 'A product as the API returns it' });
doc(Pagination, { id: 'Pagination', description: 'Offset pagination' });

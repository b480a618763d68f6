import { AGE_GROUPS, AVAILABILITIES, CONDITIONS, GENDERS } from '../../domain/catalogue/product.js';
import { AppError } from '../../errors.js';
import { markup, type Html } from '../../markup.js';
import { field } from '../layout.js';

/**
 * A product's attributes as form fields: the ones feeds and channels read each get a field of
 * their own (form name `attr_<key>`), features one a line, and every other attribute one a
 * line as `key = value` ("Other attributes"), so an edit keeps what the form has no field for.
 */
interface AttributeField {
  key: string;
  label: string;
  hint?: string;
  options?: readonly string[];
  type?: string;
}

const ATTRIBUTE_FIELDS: AttributeField[] = [
  { key: 'brand', label: 'Brand' },
  { key: 'url', label: 'Product page URL', hint: 'https://shop.example.com/products/trail-shoe' },
  { key: 'gtin', label: 'GTIN (barcode)', hint: 'GTIN-8, -12, -13 or -14' },
  { key: 'mpn', label: 'MPN (manufacturer part number)' },
  { key: 'condition', label: 'Condition', options: ['', ...CONDITIONS] },
  { key: 'availability', label: 'Availability', options: ['', ...AVAILABILITIES] },
  { key: 'inventory_quantity', label: 'Inventory quantity', type: 'number' },
  { key: 'color', label: 'Color' },
  { key: 'size', label: 'Size' },
  { key: 'material', label: 'Material' },
  { key: 'gender', label: 'Gender', options: ['', ...GENDERS] },
  {
    key: 'age_group',
    label: 'Age group',
    options: ['', ...AGE_GROUPS],
  },
  {
    key: 'item_group_id',
    label: 'Item group (variants)',
    hint: 'The same id on every variant of one product',
  },
];

const FIELD_KEYS = new Set([...ATTRIBUTE_FIELDS.map((f) => f.key), 'features']);
/** Attributes whose value is a whole number in the API. */
const NUMERIC = new Set(['inventory_quantity']);

/** Text a one-line field gives back unchanged (no line break, no space at either end). */
function fitsALine(text: string): boolean {
  return !/[\r\n]/.test(text) && text === text.trim();
}

/** A value as written on an "other attributes" line: text as is unless it would read as JSON. */
function writeValue(value: unknown): string {
  if (typeof value !== 'string' || !fitsALine(value)) return JSON.stringify(value);
  try {
    JSON.parse(value);
    return JSON.stringify(value); // "123", "true": quoted, so they come back as text
  } catch {
    return value;
  }
}

/** The form's values of a stored product's attributes. */
export function attributeValues(attributes: Record<string, unknown>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const f of ATTRIBUTE_FIELDS) {
    const v = attributes[f.key];
    if (v === undefined || v === null) continue;
    if ((typeof v === 'string' && fitsALine(v)) || (NUMERIC.has(f.key) && typeof v === 'number')) {
      values[`attr_${f.key}`] = String(v);
    }
  }
  const features = attributes.features;
  const listed =
    Array.isArray(features) &&
    features.length > 0 &&
    features.every((x) => typeof x === 'string' && x !== '' && fitsALine(x));
  if (listed) values.attr_features = (features as string[]).join('\n');
  values.attr_other = Object.entries(attributes)
    .filter(([k, v]) => {
      if (k === 'features') return !listed && v !== undefined;
      return !FIELD_KEYS.has(k) || values[`attr_${k}`] === undefined;
    })
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k} = ${writeValue(v)}`)
    .join('\n');
  return values;
}

/**
 * The attributes object the form's fields describe (the API's input; it checks each value).
 * Empty fields are left out. A line of "Other attributes" that is not `key = value` is
 * refused here, naming its line.
 */
export function attributesOf(form: Record<string, string>): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const f of ATTRIBUTE_FIELDS) {
    const value = (form[`attr_${f.key}`] ?? '').trim();
    if (value === '') continue;
    attributes[f.key] = NUMERIC.has(f.key) && /^-?\d+$/.test(value) ? Number(value) : value;
  }
  const features = (form.attr_features ?? '')
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (features.length > 0) attributes.features = features;
  for (const [i, raw] of (form.attr_other ?? '').split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const eq = line.indexOf('=');
    const key = eq > 0 ? line.slice(0, eq).trim() : '';
    if (key === '') {
      throw new AppError(
        'invalid_field',
        `Other attributes, line ${i + 1}: must be key = value (for example color_code = 0a3d62).`,
        { field: 'attributes' },
      );
    }
    if (Object.hasOwn(attributes, key)) {
      throw new AppError(
        'invalid_field',
        `Other attributes, line ${i + 1}: ${key} is given twice (it has a field of its own, or an earlier line).`,
        { field: 'attributes' },
      );
    }
    const text = line.slice(eq + 1).trim();
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // Plain text.
    }
    attributes[key] = value;
  }
  return attributes;
}

/** The attribute fields of the product form, each with the API's message beside it. */
export function attributeFields(
  values: Record<string, string>,
  errorOf: (name: string) => string | undefined,
): Html {
  const placed = new Set<string>();
  const fields = ATTRIBUTE_FIELDS.map((f) => {
    const error = errorOf(`attributes.${f.key}`);
    if (error) placed.add(f.key);
    return field({
      name: `attr_${f.key}`,
      label: f.label,
      value: values[`attr_${f.key}`],
      error,
      ...(f.hint ? { hint: f.hint } : {}),
      ...(f.options ? { options: f.options, emptyLabel: '(not given)' } : {}),
      ...(f.type ? { type: f.type } : {}),
    });
  });
  const featuresError = errorOf('attributes.features');
  // An error on any other attribute (or the attributes as a whole) is shown at "Other".
  const otherError =
    ATTRIBUTE_FIELDS.some((f) => placed.has(f.key)) || featuresError
      ? undefined
      : errorOf('attributes');
  return markup`<fieldset>
    <legend>Attributes</legend>
    ${fields}
    ${field({ name: 'attr_features', label: 'Features (one a line)', value: values.attr_features, error: featuresError, textarea: true })}
    ${field({ name: 'attr_other', label: 'Other attributes (one a line: key = value)', value: values.attr_other, error: otherError, textarea: true, hint: 'A value in JSON (a number, true, a list) is read as such; other text as text.' })}
  </fieldset>`;
}

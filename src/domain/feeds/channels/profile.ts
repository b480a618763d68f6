/**
 * A channel profile: how one platform (OpenAI, Google, Stripe, ACP agents, or our own columns)
 * takes a catalogue product. A profile maps the one catalogue product (domain/catalogue) to
 * its record and says what the platform would find wrong with it: an `error` means the
 * platform would refuse the product, so the product is left out of the file (excluded, with
 * that reason); a `warning` is published as found (an optional value the platform would
 * refuse is left out of the record, and the warning says so).
 */
import { CONDITIONS, type CatalogueProduct } from '../../catalogue/product.js';
import { isLinkAsGiven } from '../../catalogue/url.js';
import { codePointLength, isValidGtin } from '../../fields.js';
import { dropForbiddenCharacters as clean } from '../record.js';
import type { FeedFormat, FeedProfile } from '../../../db/schema.js';

/** One value of a record: text ('' = none), a list, or a map of names to text. */
export type ChannelValue = string | readonly string[] | Readonly<Record<string, string>>;

/** One product (or variant) as a flat platform record: a value per column. */
export type ChannelRecord = Record<string, ChannelValue>;

export type IssueProblem = 'missing' | 'invalid' | 'too_long';
export type IssueSeverity = 'error' | 'warning';

export interface ChannelIssue {
  field: string;
  problem: IssueProblem;
  severity: IssueSeverity;
  message: string;
}

/** What a run knows beyond the product: the store and the feed's channel settings. */
export interface ChannelSettings {
  /** STORE_NAME: the brand of products that name none. */
  storeName: string;
  /** The store's public address (seller_url). */
  storeUrl: string;
  /** settings.seller_name, else STORE_NAME. */
  sellerName: string;
  /** settings.store_country, else STORE_COUNTRY. */
  storeCountry: string;
  /** settings.target_countries, else [storeCountry]. */
  targetCountries: readonly string[];
}

/** A product mapped by a flat profile: its record and the issues found in it. */
export interface ChannelItem {
  /** The product's id (for the diagnostics and the preview's samples). */
  id: string;
  record: ChannelRecord;
  issues: readonly ChannelIssue[];
}

interface ProfileBase {
  name: FeedProfile;
  /** The formats the platform takes, the first the default. */
  formats: readonly FeedFormat[];
  /** Whether the platform takes the file gzipped ("compression": "gzip"). */
  gzip: boolean;
  /** False for `agentshelf`: every product is published and the issues only reported. */
  excludes: boolean;
}

/** A profile of one record per product (variant): agentshelf, openai, google, stripe. */
export interface FlatProfile extends ProfileBase {
  kind: 'flat';
  /** The columns, in order (CSV and TSV headers, JSON keys, XML elements). */
  columns: readonly string[];
  /** Group attributes and their sub-attributes, in order (Merchant Center's consumer_notice). */
  groups?: Readonly<Record<string, readonly string[]>>;
  /**
   * `clean` drops the characters XML forbids (dropForbiddenCharacters); the mapper passes the
   * row's own cleaner, which does nothing for the usual row (record.ts cleanerFor).
   */
  map(
    product: CatalogueProduct,
    settings: ChannelSettings,
    clean?: (value: string) => string,
  ): ChannelItem;
}

/** Errors first, so the reason a product is excluded is its first issue. */
export function sortIssues(issues: ChannelIssue[]): ChannelIssue[] {
  return issues.length < 2
    ? issues
    : issues.sort((x, y) => (x.severity === y.severity ? 0 : x.severity === 'error' ? -1 : 1));
}

/** A frozen issue: a run may report millions, so each is one shared object. */
export function issue(
  field: string,
  problem: IssueProblem,
  severity: IssueSeverity,
  message: string,
): ChannelIssue {
  return Object.freeze({ field, problem, severity, message });
}

/** An issue's code, `field.problem`: how counts are summed and exclusions named. */
export function issueCode(i: ChannelIssue): string {
  return `${i.field}.${i.problem}`;
}

/** Whether a product with these issues is left out of a profile that excludes. */
export function hasError(issues: readonly ChannelIssue[]): boolean {
  for (const i of issues) if (i.severity === 'error') return true;
  return false;
}

/** Longer than `max` code points (UTF-16 length first: the usual value stops there). */
export function longerThan(value: string, max: number): boolean {
  return value.length > max && codePointLength(value) > max;
}

/**
 * The issues a required text field can have, made once per profile and field: missing,
 * and (when the platform caps it) too long.
 */
export function requiredText(field: string, max: number | undefined, what = field) {
  return {
    missing: issue(field, 'missing', 'error', `no ${what}`),
    tooLong: issue(
      field,
      'too_long',
      'error',
      `${field} is longer than ${max ?? 0} characters, which the platform refuses`,
    ),
    check(value: string, out: ChannelIssue[]): void {
      if (value.trim() === '') out.push(this.missing);
      else if (max !== undefined && longerThan(value, max)) out.push(this.tooLong);
    },
  };
}

/** The issues of a required http(s) link, made once per profile and field. */
export function requiredLink(field: string, max: number | undefined, what = field) {
  return {
    missing: issue(field, 'missing', 'error', `no ${what}`),
    invalid: issue(field, 'invalid', 'error', `${field} is not an http(s) URL`),
    tooLong: issue(field, 'too_long', 'error', `${field} is longer than ${max ?? 0} characters`),
    check(value: string, out: ChannelIssue[]): void {
      if (value === '') out.push(this.missing);
      else if (!isLinkAsGiven(value)) out.push(this.invalid);
      else if (max !== undefined && value.length > max) out.push(this.tooLong);
    },
  };
}

/** A value as text: a string as it is, a finite number written out, else ''. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/** A product's images as a flat record carries them: cleaned, the empty ones left out. */
export interface ImageLinks {
  /** The first image, '' when there is none. */
  first: string;
  /** The other images the platform takes, in order. */
  additional: string[];
  /** Whether an additional image was left out (the platform would refuse it). */
  dropped: boolean;
}

/**
 * The product's images, each cleaned by `clean`, the empty ones left out: the first, and
 * the others `keep` takes. One pass, no intermediate arrays: every product has images.
 */
export function imageLinks(
  product: CatalogueProduct,
  clean: (value: string) => string,
  keep: (url: string) => boolean,
): ImageLinks {
  let first = '';
  const additional: string[] = [];
  let dropped = false;
  for (const value of product.images) {
    const url = clean(value);
    if (url === '') continue;
    if (first === '') first = url;
    else if (keep(url)) additional.push(url);
    else dropped = true;
  }
  return { first, additional, dropped };
}

/** The conditions the OpenAI, Google and Stripe specs take. */
const CONDITION: ReadonlySet<string> = new Set(CONDITIONS);

/** The product's GTIN, or '' with `invalid` pushed when its check digit is wrong. */
export function checkedGtin(value: unknown, invalid: ChannelIssue, issues: ChannelIssue[]): string {
  const gtin = clean(textOf(value));
  if (gtin === '' || isValidGtin(gtin)) return gtin;
  issues.push(invalid);
  return '';
}

/** The product's condition, or '' with `invalid` pushed when it is not new, refurbished or used. */
export function checkedCondition(
  value: unknown,
  invalid: ChannelIssue,
  issues: ChannelIssue[],
): string {
  const condition = textOf(value);
  if (condition === '' || CONDITION.has(condition)) return condition;
  issues.push(invalid);
  return '';
}

/** Whether the product may be found by agents: active and not opted out (enable_search). */
export function searchEligible(product: CatalogueProduct): boolean {
  return product.status === 'active' && product.attributes.enable_search !== false;
}

/** Whether the product may be bought in the agent's checkout (enable_checkout). */
export function checkoutEligible(product: CatalogueProduct): boolean {
  return product.attributes.enable_checkout === true && searchEligible(product);
}

const VARIANT_OPTIONS = ['color', 'size', 'material'] as const;

/**
 * The variant options a product carries (color, size, material), by their attribute names,
 * each value trimmed and then cleaned by `clean`; undefined when it carries none.
 */
export function variantOptions(
  product: CatalogueProduct,
  clean: (value: string) => string,
): Record<string, string> | undefined {
  let options: Record<string, string> | undefined;
  for (const key of VARIANT_OPTIONS) {
    const value = textOf(product.attributes[key]).trim();
    if (value !== '') (options ??= {})[key] = clean(value);
  }
  return options;
}

/** A variant mapped by a grouped profile: its record and the issues found in it. */
export interface GroupedVariant<V> {
  id: string;
  variant: V;
  issues: readonly ChannelIssue[];
}

/**
 * A profile whose records group variants (acp): products sharing attributes.item_group_id
 * arrive together (read in variant-group order) and become one record; a record is never
 * written without a variant.
 */
export interface GroupedProfile<V = unknown> extends ProfileBase {
  kind: 'grouped';
  mapVariant(product: CatalogueProduct, settings: ChannelSettings): GroupedVariant<V>;
  group(groupId: string, variants: V[]): unknown;
}

export type ChannelProfile = FlatProfile | GroupedProfile;

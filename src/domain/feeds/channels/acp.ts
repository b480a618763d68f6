/**
 * The `acp` profile: ACP Product records of spec version 2026-04-17 (vendor/acp/
 * schema.feed.json), the same projection as the published registry (domain/discovery/acp.ts):
 * each product a Variant, products sharing attributes.item_group_id the variants of one
 * Product. A Product is never written without a variant.
 */
import type { CatalogueProduct } from '../../catalogue/product.js';
import { toAcpProduct, toAcpVariant, type AcpVariant } from '../../discovery/acp.js';
import {
  issue,
  type ChannelIssue,
  type ChannelSettings,
  type GroupedProfile,
  type GroupedVariant,
} from './profile.js';

const I = {
  titleMissing: issue('title', 'missing', 'error', 'title is empty'),
  urlMissing: issue('url', 'missing', 'warning', 'no product page that is an http(s) URL'),
  mediaMissing: issue('media', 'missing', 'warning', 'no image that is an http(s) URL'),
  descriptionMissing: issue('description', 'missing', 'warning', 'no description'),
};

function mapAcpVariant(p: CatalogueProduct, s: ChannelSettings): GroupedVariant<AcpVariant> {
  const variant = toAcpVariant(p, s.sellerName);
  const issues: ChannelIssue[] = [];
  if (variant.title.trim() === '') issues.push(I.titleMissing);
  if (variant.url === undefined) issues.push(I.urlMissing);
  if (variant.media === undefined) issues.push(I.mediaMissing);
  if (variant.description === undefined) issues.push(I.descriptionMissing);
  return { id: p.id, variant, issues };
}

export const acpProfile: GroupedProfile<AcpVariant> = {
  name: 'acp',
  kind: 'grouped',
  formats: ['jsonl', 'json'],
  gzip: true,
  excludes: true,
  mapVariant: mapAcpVariant,
  group: toAcpProduct,
};

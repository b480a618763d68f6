import { findTextFault, isAcceptableText, showText } from '../../text.js';
import type { SourceItem } from './source.js';

/**
 * A platform item whose text a store cannot hold (U+0000, a lone surrogate: src/text.ts)
 * becomes an item that failed, with the field and the reason, so it fails alone, on both
 * stores alike (CONTRACT part 6), and nothing of it reaches a query. An item whose id is
 * acceptable keeps it, so its product (from an earlier good version) is kept as it is; an
 * error item's own text is shown with the refused characters escaped.
 */
export function screenItem(item: SourceItem): SourceItem {
  if (item.kind === 'product') {
    if (!isAcceptableText(item.externalId)) {
      return {
        kind: 'error',
        externalId: showText(item.externalId),
        field: 'id',
        reason: findTextFault(item.externalId)!.reason,
      };
    }
    const fault = findTextFault(item.product);
    if (fault) {
      return {
        kind: 'error',
        externalId: item.externalId,
        field: fault.field || 'product',
        reason: fault.reason,
      };
    }
    return item;
  }
  if (item.kind === 'error') {
    const shown = {
      externalId: item.externalId === null ? null : showText(item.externalId),
      field: showText(item.field),
      reason: showText(item.reason),
    };
    if (
      shown.externalId === item.externalId &&
      shown.field === item.field &&
      shown.reason === item.reason
    ) {
      return item;
    }
    return { kind: 'error', ...shown };
  }
  return item;
}

/**
 * get_product's option selection (vendor/ucp/spec/catalog-lookup.md, Option Selection): the
 * effective selections, the variants that match them, and on each option value whether a
 * variant with it (and the other selections) exists and can be bought.
 */
import type { UcpProduct, UcpVariant } from './present.js';

export interface Selection {
  name: string;
  label: string;
}

const labelOf = (v: UcpVariant, name: string) => v.options?.find((o) => o.name === name)?.label;

const matchesAll = (v: UcpVariant, selections: readonly Selection[]) =>
  selections.every((s) => labelOf(v, s.name) === s.label);

/**
 * The selections kept: a variant id asked for fixes them (its own options); otherwise the
 * client's, dropping from the end of `preferences` (then from the end of the selections)
 * until some variant matches them all.
 */
function effectiveSelections(
  product: UcpProduct,
  variantId: string | undefined,
  selected: readonly Selection[],
  preferences: readonly string[],
): Selection[] {
  const exact = variantId ? product.variants.find((v) => v.id === variantId) : undefined;
  if (exact) return (exact.options ?? []).map((o) => ({ name: o.name, label: o.label }));
  const names = new Set((product.options ?? []).map((o) => o.name));
  let kept = selected.filter((s) => names.has(s.name));
  const order = [
    ...preferences.filter((p) => kept.some((s) => s.name === p)),
    ...kept.map((s) => s.name).filter((n) => !preferences.includes(n)),
  ];
  while (kept.length > 0 && !product.variants.some((v) => matchesAll(v, kept))) {
    const drop = order.pop();
    kept = kept.filter((s) => s.name !== drop);
  }
  if (kept.length === 0 && product.options?.length) {
    // No selection: the featured variant's own.
    return (product.variants[0]!.options ?? []).map((o) => ({ name: o.name, label: o.label }));
  }
  return kept;
}

/** The product narrowed to its effective selections, with availability on option values. */
export function selectVariants(
  product: UcpProduct,
  variantId: string | undefined,
  selected: readonly Selection[],
  preferences: readonly string[],
) {
  const effective = effectiveSelections(product, variantId, selected, preferences);
  const variants = product.variants.filter((v) => matchesAll(v, effective));
  const options = (product.options ?? []).map((option) => {
    const others = effective.filter((s) => s.name !== option.name);
    return {
      name: option.name,
      values: option.values.map(({ label }) => {
        const candidates = product.variants.filter(
          (v) => labelOf(v, option.name) === label && matchesAll(v, others),
        );
        return {
          label,
          available: candidates.some((v) => v.availability.available),
          exists: candidates.length > 0,
        };
      }),
    };
  });
  return {
    ...product,
    ...(options.length ? { options } : {}),
    ...(effective.length ? { selected: effective } : {}),
    variants: variants.length > 0 ? variants : product.variants.slice(0, 1),
  };
}

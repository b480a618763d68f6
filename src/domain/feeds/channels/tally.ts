/**
 * What one generation (or its preview) found in a feed's products: how many were included
 * and excluded, by which reason, which fields were missing or invalid, and a few product ids
 * for each reason. The pipeline and the preview count through the same tally, so a preview
 * says what the next generation will do.
 */
import type { FeedDiagnostics, FeedPreview } from '../schemas.js';
import { issueCode, type ChannelIssue } from './profile.js';

/** Product ids kept per reason (CONTRACT part 10: up to 20). */
export const SAMPLE_IDS = 20;

interface Count {
  count: number;
  ids: string[];
}

function bump(map: Map<ChannelIssue, Count>, issue: ChannelIssue, id: string, keepIds: boolean) {
  let c = map.get(issue);
  if (!c) map.set(issue, (c = { count: 0, ids: [] }));
  c.count++;
  if (keepIds && c.ids.length < SAMPLE_IDS) c.ids.push(id);
}

const SEVERITY_ORDER = (a: ChannelIssue, b: ChannelIssue) =>
  a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1;

export class IssueTally {
  products = 0;
  included = 0;
  excluded = 0;
  withErrors = 0;
  withWarnings = 0;
  /** Products per issue (an issue object is shared by every product that has it). */
  private readonly issues = new Map<ChannelIssue, Count>();
  /** Excluded products per reason (the first error each has). */
  private readonly reasons = new Map<ChannelIssue, Count>();
  /** Included products per issue they were published with. */
  private readonly published = new Map<ChannelIssue, Count>();

  /**
   * @param excludes whether a product with an error is left out (every profile but agentshelf)
   * @param keepIds whether to keep sample ids (the preview; a generation needs counts only)
   */
  constructor(
    private readonly excludes: boolean,
    private readonly keepIds = false,
  ) {}

  /** Counts one product's issues; answers whether the product is written. */
  add(id: string, issues: readonly ChannelIssue[]): boolean {
    this.products++;
    let errors = 0;
    let firstError: ChannelIssue | undefined;
    for (const i of issues) {
      bump(this.issues, i, id, this.keepIds);
      if (i.severity === 'error') {
        errors++;
        firstError ??= i;
      }
    }
    if (errors > 0) this.withErrors++;
    if (errors < issues.length) this.withWarnings++;
    if (this.excludes && firstError) {
      this.excluded++;
      bump(this.reasons, firstError, id, this.keepIds);
      return false;
    }
    this.included++;
    for (const i of issues) bump(this.published, i, id, this.keepIds);
    return true;
  }

  /** The diagnostics summary a generation records on the feed (issues, errors first). */
  summary(generatedAt: string): Omit<FeedDiagnostics, 'url'> {
    return {
      generated_at: generatedAt,
      products: this.products,
      products_with_errors: this.withErrors,
      products_with_warnings: this.withWarnings,
      excluded: this.excluded,
      issues: sorted(this.issues).map(([i, c]) => ({
        code: issueCode(i),
        field: i.field,
        problem: i.problem,
        severity: i.severity,
        message: i.message,
        count: c.count,
      })),
    };
  }

  /** The preview's counts (CONTRACT part 10). */
  preview(): Omit<FeedPreview, 'feed_id' | 'profile' | 'format' | 'records'> {
    const reason = ([i, c]: [ChannelIssue, Count]) => ({
      code: issueCode(i),
      field: i.field,
      problem: i.problem,
      message: i.message,
      count: c.count,
      product_ids: c.ids,
    });
    const invalid: Record<string, Record<string, number>> = {};
    for (const [i, c] of this.issues) {
      const field = (invalid[i.field] ??= {});
      field[i.problem] = (field[i.problem] ?? 0) + c.count;
    }
    return {
      products: this.products,
      included: this.included,
      excluded: this.excluded,
      excluded_by_reason: sorted(this.reasons).map(reason),
      warnings: sorted(this.published).map(reason),
      invalid_by_field: invalid,
    };
  }
}

/** Errors first, then the most frequent, then by code: a stable order for equal input. */
function sorted(map: Map<ChannelIssue, Count>): [ChannelIssue, Count][] {
  return [...map].sort(
    ([a, x], [b, y]) =>
      SEVERITY_ORDER(a, b) || y.count - x.count || issueCode(a).localeCompare(issueCode(b)),
  );
}

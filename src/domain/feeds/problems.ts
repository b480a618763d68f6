import fs from 'node:fs';
import readline from 'node:readline';
import { findProductNames } from '../../db/queries/products.js';
import type { ProductStatus } from '../../db/schema.js';
import type { Db } from '../../db/store.js';
import { feedDiagnosticsPath } from './files.js';

/** A product one problem of a feed's last generation names. */
export interface ProblemProduct {
  id: string;
  /** The product's name now; undefined when it has been deleted since. */
  name: string | undefined;
  status: ProductStatus | undefined;
  /** Left out of the feed (its first error), not only warned about. */
  excluded: boolean;
}

export interface ProblemPage {
  products: ProblemProduct[];
  /** More products have the problem after this page. */
  more: boolean;
}

interface DiagnosticsLine {
  id: string;
  excluded?: boolean;
  issues: { field: string; problem: string }[];
}

/**
 * The products the last generation of a feed found with one problem (`code`, `field.problem`
 * as the diagnostics name it), a page at a time, read from the feed's diagnostics file (one
 * line per product with issues, in catalogue order) as a stream: a page costs the lines before
 * its end, never the whole file in memory. Undefined when the feed has no diagnostics file yet.
 */
export async function productsWithProblem(
  db: Db,
  dataDir: string,
  feedId: string,
  code: string,
  page: { offset: number; limit: number },
): Promise<ProblemPage | undefined> {
  const dot = code.indexOf('.');
  // Codes are `field.problem`; anything else names no product.
  if (dot <= 0) return { products: [], more: false };
  const field = code.slice(0, dot);
  const problem = code.slice(dot + 1);
  // The line holds the issue as JSON: a plain text search skips the lines without it unparsed.
  const needle = JSON.stringify(problem);
  let stream: fs.ReadStream;
  try {
    stream = fs.createReadStream(feedDiagnosticsPath(dataDir, feedId), { encoding: 'utf8' });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const found: { id: string; excluded: boolean }[] = [];
  let seen = 0;
  let more = false;
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line.includes(needle)) continue;
      const entry = JSON.parse(line) as DiagnosticsLine;
      if (!entry.issues.some((i) => i.field === field && i.problem === problem)) continue;
      if (seen++ < page.offset) continue;
      if (found.length === page.limit) {
        more = true;
        break;
      }
      found.push({ id: entry.id, excluded: entry.excluded === true });
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  const names = await findProductNames(
    db,
    found.map((f) => f.id),
  );
  return {
    products: found.map((f) => ({
      ...f,
      name: names.get(f.id)?.name,
      status: names.get(f.id)?.status,
    })),
    more,
  };
}

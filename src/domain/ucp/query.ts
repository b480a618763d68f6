/**
 * A shopper's words as search terms. Whatever the query holds (FTS5 or tsquery syntax such as
 * `"`, `*`, `NEAR`, `-`, `|`, or ten thousand characters), it is read as text: split into words
 * of letters and digits, the commonest English words dropped (PostgreSQL's english
 * configuration drops them too, so both stores look for the same words), at most MAX_TERMS
 * distinct words kept. The stores stem the words themselves (Porter on SQLite, Snowball
 * english on PostgreSQL).
 */

export const MAX_TERMS = 16;
const MAX_TERM_LENGTH = 64;

/** The stop words of PostgreSQL's english dictionary (Snowball's list). */
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself ' +
    'she her hers herself it its itself they them their theirs themselves what which who whom ' +
    'this that these those am is are was were be been being have has had having do does did ' +
    'doing a an the and but if or because as until while of at by for with about against ' +
    'between into through during before after above below to from up down in out on off over ' +
    'under again further then once here there when where why how all any both each few more ' +
    'most other some such no nor not only own same so than too very s t can will just don ' +
    'should now'
  ).split(' '),
);

/** The words of a query, lower-cased, without stop words and repeats, in their order. */
export function searchTerms(query: string): string[] {
  const terms: string[] = [];
  for (const match of query.normalize('NFC').matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0].toLowerCase();
    if (word.length > MAX_TERM_LENGTH || STOP_WORDS.has(word) || terms.includes(word)) continue;
    terms.push(word);
    if (terms.length === MAX_TERMS) break;
  }
  return terms;
}

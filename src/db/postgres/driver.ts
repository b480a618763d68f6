import type pg from 'pg';

/** Statement texts that get a server-side prepared statement, at most (per connection). */
const MAX_PREPARED = 500;
const statementNames = new Map<string, string>();

/**
 * Runs the store's queries as named prepared statements: PostgreSQL parses and plans a text
 * once per connection instead of on every run (a primary-key read costs about as much to plan
 * as to run). The texts are Kysely's compiled SQL, with parameters apart, so they repeat; the
 * first MAX_PREPARED distinct texts are named (the hot paths come first), later ones run as
 * before, so a stream of one-off statements never fills the server's memory.
 */
export function preparingQueries(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && args.length === 2) {
      let name = statementNames.get(text);
      if (name === undefined && statementNames.size < MAX_PREPARED) {
        name = `agentshelf_${statementNames.size}`;
        statementNames.set(text, name);
      }
      if (name !== undefined) return query({ name, text, values });
    }
    return query(...args);
  };
}

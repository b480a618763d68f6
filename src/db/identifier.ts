const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/** Column names and JSON keys go into SQL text: only plain identifiers are accepted. */
export function checkIdentifier(what: string, name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new Error(`${what}: ${JSON.stringify(name)} is not a plain lower-case identifier`);
  }
  return name;
}

/**
 * Runs a chunked delete until a chunk comes back short: `deleteChunk(n)` deletes at most `n`
 * rows and says how many went. Between chunks the event loop lets requests in, so a large
 * sweep never holds the write lock for long. Returns how many rows went in all.
 */
export async function deleteInChunks(
  deleteChunk: (chunk: number) => Promise<number>,
  chunk: number,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await deleteChunk(chunk);
    deleted += n;
    if (n < chunk) return deleted;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

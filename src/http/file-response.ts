import fs from 'node:fs';
import type Koa from 'koa';
import { requestState } from './request-state.js';
import type { Reply } from './route.js';

/** Whether an If-None-Match header names this ETag (weak comparison, RFC 9110 13.1.2). */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => opaque(tag) === wanted);
}

/** Whether an Accept-Encoding header accepts gzip (q above 0, directly or through `*`). */
export function acceptsGzip(header: string): boolean {
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    const weight = Number.isFinite(q) ? q : 0;
    if (name === 'gzip' || name === 'x-gzip') gzip = weight;
    else if (name === '*') any = weight;
  }
  return (gzip ?? any ?? 0) > 0;
}

/** A Content-Disposition naming a download: an ASCII fallback and the UTF-8 name (RFC 6266). */
export function attachmentDisposition(name: string, extension: string, fallback: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._ -]+/g, '_')
    .replace(/_+/g, '_')
    .trim()
    .slice(0, 100);
  const plain = /[A-Za-z0-9]/.test(ascii) ? ascii : fallback;
  const encoded = encodeURIComponent(`${name}.${extension}`).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${plain}.${extension}"; filename*=UTF-8''${encoded}`;
}

export interface PublishedFileOptions {
  /** The plain file; its `.gz` sibling is served to clients that accept gzip. */
  path: string;
  contentType: string;
  disposition?: string;
  gzip?: boolean;
}

async function openIfPresent(file: string): Promise<fs.promises.FileHandle | undefined> {
  try {
    return await fs.promises.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Serves a file the pipeline publishes, or undefined when it is not there. The file is opened
 * first and described by fstat of that open file, so the ETag always matches the bytes sent
 * even when a newer file is renamed into place meanwhile; an unchanged file keeps its ETag.
 * Answers If-None-Match / If-Modified-Since with 304 and HEAD without opening a stream.
 */
export async function servePublishedFile(
  ctx: Koa.Context,
  options: PublishedFileOptions,
): Promise<Reply | undefined> {
  const wantsGzip = (options.gzip ?? true) && acceptsGzip(ctx.get('accept-encoding'));
  let handle = wantsGzip ? await openIfPresent(`${options.path}.gz`) : undefined;
  const encoded = handle !== undefined;
  handle ??= await openIfPresent(options.path);
  if (!handle) return undefined;
  let keepOpen = false;
  try {
    const stat = await handle.stat();
    const etag = `"${stat.ino.toString(36)}-${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}${encoded ? '-gz' : ''}"`;
    const headers: Record<string, string> = {
      'Content-Type': options.contentType,
      ETag: etag,
      'Last-Modified': stat.mtime.toUTCString(),
      // Authenticated content: a cache may keep it for this client and must revalidate.
      'Cache-Control': 'private, no-cache',
      Vary: 'Accept-Encoding',
      ...(options.disposition ? { 'Content-Disposition': options.disposition } : {}),
      ...(encoded ? { 'Content-Encoding': 'gzip' } : {}),
    };
    // The raw file, never wrapped by `Prefer: envelope`.
    requestState(ctx).raw = true;
    const ifNoneMatch = ctx.get('if-none-match');
    const ifModifiedSince = Date.parse(ctx.get('if-modified-since'));
    const notModified = ifNoneMatch
      ? matchesIfNoneMatch(ifNoneMatch, etag)
      : Number.isFinite(ifModifiedSince) &&
        Math.floor(stat.mtimeMs / 1000) * 1000 <= ifModifiedSince;
    if (notModified) return { status: 304, headers };
    headers['Content-Length'] = String(stat.size);
    if (ctx.method === 'HEAD') return { status: 200, headers };
    keepOpen = true;
    // The stream closes the file when it ends, or when Koa destroys it on a client abort.
    return { status: 200, headers, body: handle.createReadStream() };
  } finally {
    if (!keepOpen) await handle.close();
  }
}

import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on host:port (0 picks a free port); resolves to the port, rejects when taken. */
export async function listen(server: http.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** The base URL of a server listening on host:port (an IPv6 host in brackets). */
export function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Stops accepting and closes idle connections; requests in flight get `graceMs` to finish,
 * then their connections are closed too. Resolves once the server has closed.
 */
export async function closeGracefully(server: http.Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
}

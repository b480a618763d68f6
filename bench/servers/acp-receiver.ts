/**
 * The receiving end of the channels benchmark's ACP push (bench/channels-delivery.ts): a bare
 * `PATCH /feeds/{id}/products` that reads the body and answers `{id, accepted: true}`, with no
 * validation (test/support/acp-feed-server.ts validates every Product with ajv, which would
 * weigh on the receiver rather than the sender). Our push and the bare loop send to the same
 * one. `GET /stats` answers the PATCH requests and body bytes received so far.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let requests = 0;
let bytes = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ requests, bytes }));
    return;
  }
  const match = /^\/feeds\/([^/]+)\/products$/.exec(req.url ?? '');
  let received = 0;
  req.on('data', (chunk: Buffer) => (received += chunk.length));
  req.on('end', () => {
    if (req.method !== 'PATCH' || !match) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"type":"invalid_request","code":"not_found","message":"Not found","param":"path"}');
      return;
    }
    requests++;
    bytes += received;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: decodeURIComponent(match[1]!), accepted: true }));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

/**
 * s3rver and the counting proxy of the tests, in a child of the `publish` benchmark: s3rver's
 * ListObjectsV2 continuation token is DES, which Node's OpenSSL 3 gives only with
 * --openssl-legacy-provider, so the child is started with it (a bucket over 1,000 keys lists
 * in pages). Usage: fork with DIR BUCKET...; messages: reset, requests, close.
 */
import { startS3Server } from '../test/support/s3.js';

const [dir, ...buckets] = process.argv.slice(2) as [string, ...string[]];
const { fake, close } = await startS3Server(dir, buckets);
const send = (message: unknown) => process.send!(message);
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'reset') {
    fake.requests.length = 0;
    send({ ok: true });
  } else if (message.cmd === 'requests') {
    send({ requests: fake.requests });
  } else if (message.cmd === 'close') {
    void close().then(() => {
      send({ ok: true });
      process.disconnect();
    });
  }
});
send({ endpoint: fake.endpoint });

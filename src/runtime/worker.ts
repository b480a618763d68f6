/**
 * Starts a worker thread whose code works from source and from the one-file binary. From
 * source the worker is its compiled file (`devUrl`); in the bundle it is a bundle of its own
 * (scripts/dist.mjs), an asset of the binary run with `eval`, or a file beside a dev-run bundle.
 */
import path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { inBundle, inSea, seaTextAsset } from './sea.js';

/**
 * @param assetName the worker bundle's name, as scripts/dist.mjs writes it (e.g. `audit-worker.cjs`)
 * @param devUrl the compiled worker module, for runs from source
 */
export function startWorker(assetName: string, devUrl: URL, options: WorkerOptions = {}): Worker {
  if (!inBundle()) return new Worker(devUrl, options);
  if (inSea()) return new Worker(seaTextAsset(assetName), { ...options, eval: true });
  return new Worker(path.join(__dirname, assetName), options);
}

/* global console, performance, process */
// Writes dist/agentshelf-linux-x64: agentshelf as one executable (a Node.js single executable
// application) and dist/agentshelf-linux-x64.sha256 beside it. Run by `make dist` on Node 26
// (`--build-sea`); the binary carries the Node that builds it.
//
// Inside: an esbuild CommonJS bundle of src/main.ts (with V8's code cache), the bundles of the
// audit writer thread and of the file writer thread, and better-sqlite3's prebuilt addon
// (N-API, so one file serves every Node). Those are the only files the service reads at run
// time besides its data: the migrations are code (src/db/migrations/index.ts), the version is
// inlined. src/runtime/ loads them from the executable. Intermediate files end in dist/bundle/;
// `node dist/bundle/main.cjs` runs the bundle without the executable. Two builds at once (test
// runs on two Nodes) do not clash: each works in a directory of its own and renames its results
// into place.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const BUNDLE = path.join(DIST, 'bundle');
const OUTPUT = path.join(DIST, 'agentshelf-linux-x64');
const ADDON = path.join(ROOT, 'node_modules/better-sqlite3/prebuilds/linux-x64.node');
const WORKER_ASSET = 'audit-worker.cjs'; // the name src/domain/audit/writer.ts starts
const FILE_WORKER_ASSET = 'file-worker.cjs'; // src/publish/off-thread-file.ts
const ADDON_ASSET = 'better_sqlite3.node'; // src/runtime/native-addon.ts

function fail(message) {
  console.error(`dist: ${message}`);
  process.exit(1);
}

const major = Number(process.versions.node.split('.')[0]);
if (major < 26) fail(`needs Node.js 26 (--build-sea), this is ${process.version}: run make dist`);
if (process.platform !== 'linux' || process.arch !== 'x64')
  fail(`builds linux-x64 only, this is ${process.platform}-${process.arch}`);
if (!fs.existsSync(ADDON))
  fail(`${path.relative(ROOT, ADDON)} is missing: better-sqlite3 >= 13 ships it (npm ci)`);

const started = performance.now();
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const addon = fs.readFileSync(ADDON);
const addonHash = crypto.createHash('sha256').update(addon).digest('hex').slice(0, 16);

fs.mkdirSync(DIST, { recursive: true });
const work = fs.mkdtempSync(path.join(DIST, '.build-'));

/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${major}`,
  logLevel: 'warning',
  legalComments: 'none',
  // ssh2 (SFTP deliveries) tries cpu-features, an optional native addon, inside a try: it is
  // not built here (no install scripts) and not bundled; ssh2 goes on without it.
  external: ['cpu-features'],
  define: {
    __AGENTSHELF_BUNDLE__: 'true',
    __AGENTSHELF_VERSION__: JSON.stringify(pkg.version),
    __AGENTSHELF_ADDON_HASH__: JSON.stringify(addonHash),
    // CommonJS has no import.meta; what is left of it (paths for runs from source) gets the
    // bundle's own URL. An eval'd worker has no __filename.
    'import.meta.url': '__agentshelf_import_meta_url',
  },
  banner: {
    js: "var __agentshelf_import_meta_url = typeof __filename === 'string' ? require('node:url').pathToFileURL(__filename).href : 'file:///';",
  },
};
await build({
  ...common,
  entryPoints: [path.join(ROOT, 'src/main.ts')],
  outfile: path.join(work, 'main.cjs'),
});
await build({
  ...common,
  entryPoints: [path.join(ROOT, 'src/domain/audit/worker.ts')],
  outfile: path.join(work, WORKER_ASSET),
});
await build({
  ...common,
  entryPoints: [path.join(ROOT, 'src/publish/file-worker.ts')],
  outfile: path.join(work, FILE_WORKER_ASSET),
});
fs.copyFileSync(ADDON, path.join(work, ADDON_ASSET));

// The executable is a copy of this node; without its symbol table it is ~30 MB smaller, and
// the addon still finds the N-API functions (they are in the dynamic symbol table).
const node = path.join(work, 'node');
fs.copyFileSync(process.execPath, node);
fs.chmodSync(node, 0o755);
let stripped = false;
try {
  execFileSync('strip', [node], { stdio: 'ignore' });
  stripped = true;
} catch {
  // No strip on this machine: the binary is bigger, and works the same.
}

// Paths relative to `work` (the cwd of --build-sea): stack traces name the bundle `main.cjs`.
const output = `${OUTPUT}.${process.pid}.tmp`;
const config = {
  main: 'main.cjs',
  mainFormat: 'commonjs',
  executable: 'node',
  output,
  disableExperimentalSEAWarning: true,
  useCodeCache: true,
  useSnapshot: false,
  // NODE_OPTIONS is for the node a user runs, not for agentshelf.
  execArgvExtension: 'none',
  assets: {
    [ADDON_ASSET]: ADDON_ASSET,
    [WORKER_ASSET]: WORKER_ASSET,
    [FILE_WORKER_ASSET]: FILE_WORKER_ASSET,
  },
};
fs.writeFileSync(path.join(work, 'sea.json'), `${JSON.stringify(config, null, 2)}\n`);
execFileSync(process.execPath, ['--build-sea', 'sea.json'], { cwd: work, stdio: 'ignore' });
fs.chmodSync(output, 0o755);

const digest = crypto.createHash('sha256').update(fs.readFileSync(output)).digest('hex');
fs.writeFileSync(`${output}.sha256`, `${digest}  ${path.basename(OUTPUT)}\n`);
fs.renameSync(output, OUTPUT);
fs.renameSync(`${output}.sha256`, `${OUTPUT}.sha256`);
fs.rmSync(path.join(work, 'node')); // 120 MB, and inside the binary now
fs.rmSync(BUNDLE, { recursive: true, force: true });
try {
  fs.renameSync(work, BUNDLE);
} catch {
  fs.rmSync(work, { recursive: true, force: true }); // another build put its bundle there first
}

const size = fs.statSync(OUTPUT).size;
console.log(
  `dist: ${path.relative(ROOT, OUTPUT)} (${size.toLocaleString('en')} bytes, agentshelf ${pkg.version}, Node.js ${process.version}${stripped ? ', stripped' : ''}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(`dist: sha256 ${digest}`);

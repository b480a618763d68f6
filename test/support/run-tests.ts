/**
 * Runs the tap suite and ends with the line CI reads: `N passed, M failed`.
 * N and M count the named tests (each t.test of a file); a file that fails outside
 * any named test counts as one failure.
 */
import { spawn } from 'node:child_process';

const args = ['tap', '--reporter=tap', ...process.argv.slice(2)];
const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'inherit'] });
let passed = 0;
let failed = 0;
let buffer = '';
let fileHadTests = false;
const failures: string[] = [];

function onLine(line: string): void {
  process.stdout.write(`${line}\n`);
  // Top-level lines are files; lines indented by 4 spaces are the tests inside them.
  const inner = /^ {4}(not ok|ok) \d+ - (.*?)(\s+#\s*(SKIP|TODO).*)?$/.exec(line);
  if (inner) {
    fileHadTests = true;
    if (inner[3]) return;
    if (inner[1] === 'ok') passed++;
    else {
      failed++;
      failures.push(inner[2]!);
    }
    return;
  }
  const top = /^(not ok|ok) \d+ - (.*?)(\s+#.*)?$/.exec(line);
  if (top) {
    if (top[1] === 'not ok' && !fileHadTests) {
      failed++;
      failures.push(top[2]!);
    }
    fileHadTests = false;
  }
}

child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk: string) => {
  buffer += chunk;
  let i: number;
  while ((i = buffer.indexOf('\n')) >= 0) {
    onLine(buffer.slice(0, i));
    buffer = buffer.slice(i + 1);
  }
});
child.on('close', (code) => {
  if (buffer) onLine(buffer);
  if (failures.length) console.log(`\nfailed:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
  if (code !== 0 && failed === 0) failed = 1;
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
});

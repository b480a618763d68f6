/**
 * A real SFTP server for tests: Debian's OpenSSH (`openssh-server`, /usr/sbin/sshd) in the
 * foreground on a loopback port, with a throwaway host key and client key made by ssh-keygen,
 * serving SFTP (internal-sftp) to the user running the tests. Stopped when the test ends.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';

export const SSHD = process.env.SSHD_BIN ?? '/usr/sbin/sshd';

export interface Sshd {
  host: '127.0.0.1';
  port: number;
  username: string;
  /** The host key's fingerprint as OpenSSH prints it (SHA256:...). */
  hostKeySha256: string;
  /** A client key the server accepts (OpenSSH private key text). */
  privateKey: string;
  /** A folder the user may write to, for uploads. */
  root: string;
}

/** Why sshd cannot run here, or undefined when it can (tests skip with the reason). */
export function sshdMissing(): string | undefined {
  if (!fs.existsSync(SSHD)) return `${SSHD} is missing (apt-get install openssh-server)`;
  return undefined;
}

function keygen(file: string): void {
  const res = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', file]);
  if (res.status !== 0) throw new Error(`ssh-keygen: ${res.stderr}`);
}

function fingerprint(publicKeyFile: string): string {
  const res = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', publicKeyFile], {
    encoding: 'utf8',
  });
  const match = /SHA256:[A-Za-z0-9+/]{43}/.exec(res.stdout);
  if (!match) throw new Error(`ssh-keygen -l: ${res.stdout}${res.stderr}`);
  return match[0];
}

/** A port free on the loopback interface a moment ago. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts sshd -D; resolves once it says it listens. */
export async function startSshd(t: Test): Promise<Sshd> {
  // A folder of its own: t.testdir() is the test's, and a test server started after this
  // would empty it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-sshd-'));
  fs.mkdirSync(path.join(dir, 'upload'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'client_key'));
  fs.copyFileSync(path.join(dir, 'client_key.pub'), path.join(dir, 'authorized_keys'));
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${path.join(dir, 'host_key')}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    'StrictModes no',
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    'Subsystem sftp internal-sftp',
    'LogLevel INFO',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'sshd_config'), `${config}\n`);
  // As root, sshd needs its privilege separation folder.
  if (process.getuid?.() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const child = spawn(SSHD, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.teardown(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      log += d;
      if (log.includes(`Server listening on 127.0.0.1 port ${port}`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`sshd exited (${code}): ${log}`)));
    child.once('error', reject);
  });
  return {
    host: '127.0.0.1',
    port,
    username: os.userInfo().username,
    hostKeySha256: fingerprint(path.join(dir, 'host_key.pub')),
    privateKey: fs.readFileSync(path.join(dir, 'client_key'), 'utf8'),
    root: path.join(dir, 'upload'),
  };
}

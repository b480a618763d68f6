/**
 * A real SFTP server for tests: Debian's OpenSSH (`openssh-server`, /usr/sbin/sshd) in the
 * foreground on a loopback port, with a throwaway host key and client key made by ssh-keygen,
 * serving SFTP (internal-sftp) to the user running the tests. Stopped when the test ends.
 *
 * With `password`, sshd also takes password logins for a throwaway unprivileged account.
 * Without PAM, sshd checks a password against /etc/shadow; the test adds no account to the
 * machine: sshd runs in a mount namespace of its own (`unshare --mount`) where copies of
 * /etc/passwd, /etc/group and /etc/shadow that carry the account are bind-mounted over the
 * real ones. That needs root (CAP_SYS_ADMIN); passwordSshdMissing() says why not otherwise.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { freePort } from './nginx.js';

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
  /** With `password`: the throwaway account that logs in with it (uploads go to `root`). */
  passwordUser?: string;
}

/** The throwaway account of a password sshd, present only inside its mount namespace. */
const PASSWORD_USER = 'agentshelf-sftp';
const PASSWORD_UID = 40_123;

/** Why sshd cannot run here, or undefined when it can (tests skip with the reason). */
export function sshdMissing(): string | undefined {
  if (!fs.existsSync(SSHD)) return `${SSHD} is missing (apt-get install openssh-server)`;
  return undefined;
}

/** Why a password sshd cannot run here, or undefined when it can. */
export function passwordSshdMissing(): string | undefined {
  const missing = sshdMissing();
  if (missing) return missing;
  if (process.getuid?.() !== 0) {
    return 'password logins need root: sshd without PAM reads /etc/shadow, and the throwaway account lives in a mount namespace (unshare --mount)';
  }
  const probe = spawnSync('unshare', ['--mount', 'true']);
  if (probe.status !== 0) return `unshare --mount is refused here: ${probe.stderr}`;
  return undefined;
}

/** The SHA-512 crypt hash of a password, as /etc/shadow holds it (openssl passwd -6). */
function cryptHash(password: string): string {
  const res = spawnSync('openssl', ['passwd', '-6', '-stdin'], { input: password });
  if (res.status !== 0) throw new Error(`openssl passwd: ${res.stderr}`);
  return res.stdout.toString().trim();
}

/**
 * Copies of the account files with the throwaway account added, and the shell command that
 * bind-mounts them over /etc's (inside sshd's own mount namespace) and then runs sshd.
 */
function passwordAccount(dir: string, password: string, sshdArgs: string[]): string[] {
  const add = (file: string, line: string) => {
    const copy = path.join(dir, path.basename(file));
    fs.writeFileSync(copy, `${fs.readFileSync(file, 'utf8').trimEnd()}\n${line}\n`, {
      mode: file === '/etc/shadow' ? 0o640 : 0o644,
    });
    return `mount --bind ${copy} ${file}`;
  };
  const home = path.join(dir, 'upload');
  const mounts = [
    add('/etc/passwd', `${PASSWORD_USER}:x:${PASSWORD_UID}:${PASSWORD_UID}::${home}:/bin/sh`),
    add('/etc/group', `${PASSWORD_USER}:x:${PASSWORD_UID}:`),
    add('/etc/shadow', `${PASSWORD_USER}:${cryptHash(password)}:20000:0:99999:7:::`),
  ];
  // The account writes the upload folder; the folders above it must let it through.
  fs.chmodSync(dir, 0o755);
  fs.chownSync(home, PASSWORD_UID, PASSWORD_UID);
  const quoted = sshdArgs.map((a) => `'${a}'`).join(' ');
  return ['--mount', 'sh', '-c', `${mounts.join(' && ')} && exec ${quoted}`];
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

/** A running sshd, started without a tap test (the benchmarks); stop() ends it. */
export interface SshdProcess extends Sshd {
  pid: number;
  /** The client key's file (mode 0600), for OpenSSH's own ssh and sftp (`-i`). */
  privateKeyFile: string;
  /** A known_hosts file that pins the host key for this port. */
  knownHostsFile: string;
  /** sshd's log so far (stderr, `-e`): a line per login ("Accepted publickey for ..."). */
  log(): string;
  /** Ends sshd (SIGTERM, waited for) and removes its folder. */
  stop(): Promise<void>;
}

/** Starts sshd -D; resolves once it says it listens. Ended by the test's teardown. */
export async function startSshd(t: Test, options: { password?: string } = {}): Promise<Sshd> {
  const running = await launchSshd(options);
  t.teardown(() => running.stop());
  return {
    host: running.host,
    port: running.port,
    username: running.username,
    hostKeySha256: running.hostKeySha256,
    privateKey: running.privateKey,
    root: running.root,
    ...(running.passwordUser ? { passwordUser: running.passwordUser } : {}),
  };
}

/** Starts sshd -D in a folder of its own; resolves once it says it listens. */
export async function launchSshd(options: { password?: string } = {}): Promise<SshdProcess> {
  // A folder of its own: t.testdir() is the test's, and a test server started after this
  // would empty it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-sshd-'));
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    return await runSshd(dir, options);
  } catch (err) {
    removeDir();
    throw err;
  }
}

async function runSshd(dir: string, options: { password?: string }): Promise<SshdProcess> {
  fs.mkdirSync(path.join(dir, 'upload'));
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
    `PasswordAuthentication ${options.password ? 'yes' : 'no'}`,
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    'Subsystem sftp internal-sftp',
    'LogLevel INFO',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'sshd_config'), `${config}\n`);
  // As root, sshd needs its privilege separation folder.
  if (process.getuid?.() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const args = [SSHD, '-D', '-e', '-f', path.join(dir, 'sshd_config')];
  const [command, ...rest] = options.password
    ? ['unshare', ...passwordAccount(dir, options.password, args)]
    : args;
  const child = spawn(command!, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  const running = () =>
    child.pid !== undefined && child.exitCode === null && child.signalCode === null;
  // sshd -D outlives a parent that exits (a failed benchmark): ended with it.
  const onExit = () => {
    if (running()) child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const stop = async () => {
    process.removeListener('exit', onExit);
    if (running()) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  let log = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        log += d;
        if (log.includes(`Server listening on 127.0.0.1 port ${port}`)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`sshd exited (${code}): ${log}`)));
      child.once('error', reject);
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const hostPublicKey = fs.readFileSync(path.join(dir, 'host_key.pub'), 'utf8').trim();
  const knownHostsFile = path.join(dir, 'known_hosts');
  fs.writeFileSync(knownHostsFile, `[127.0.0.1]:${port} ${hostPublicKey}\n`);
  return {
    host: '127.0.0.1',
    port,
    username: os.userInfo().username,
    hostKeySha256: fingerprint(path.join(dir, 'host_key.pub')),
    privateKey: fs.readFileSync(path.join(dir, 'client_key'), 'utf8'),
    root: path.join(dir, 'upload'),
    ...(options.password ? { passwordUser: PASSWORD_USER } : {}),
    pid: child.pid!,
    privateKeyFile: path.join(dir, 'client_key'),
    knownHostsFile,
    log: () => log,
    stop,
  };
}

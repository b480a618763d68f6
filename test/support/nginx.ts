import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const MODULES = '/usr/lib/nginx/modules';
const NEEDED = ['ndk_http_module.so', 'ngx_http_lua_module.so', 'ngx_http_brotli_static_module.so'];

/**
 * Why nginx cannot run here, or null when it can: the binary and the Lua and brotli_static
 * modules (Debian: nginx libnginx-mod-http-lua libnginx-mod-http-brotli-static).
 */
export function nginxMissing(): string | null {
  const found = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  if (found.error) return 'nginx is not installed (apt-get install -y nginx)';
  const missing = NEEDED.filter((m) => !fs.existsSync(path.join(MODULES, m)));
  if (missing.length) {
    return `nginx modules missing: ${missing.join(', ')} (apt-get install -y libnginx-mod-http-lua libnginx-mod-http-brotli-static)`;
  }
  return null;
}

/** A free TCP port on 127.0.0.1 (nginx cannot listen on port 0 and tell us which). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface PrivateNginx {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Runs a private nginx (its own prefix, pid file, logs and temp dirs under `dir`) with the
 * pipeline's config included in http {}, and waits until it accepts connections. Stopped by
 * its PID.
 */
export async function startNginx(options: {
  dir: string;
  include: string;
  port: number;
  accessLog?: boolean;
}): Promise<PrivateNginx> {
  const { dir } = options;
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `${NEEDED.map((m) => `load_module ${MODULES}/${m};`).join('\n')}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log ${options.accessLog ? `${dir}/logs/access.log combined buffer=64k flush=1s` : 'off'};
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 1000000;
  include ${options.include};
}
`,
  );
  const child: ChildProcess = spawn('nginx', ['-c', conf, '-p', dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(options.port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${options.port}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null) {
        process.kill(child.pid!, 'SIGTERM');
        await exited;
      }
    },
  };
}

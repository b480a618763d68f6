import type { TestServer } from './server.js';

/** A signed-in dashboard client over plain HTTP (no browser): cookie jar of one cookie. */
export interface DashClient {
  cookie: string;
  get(
    path: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; text: string }>;
  /** Posts a form; `csrf` is filled from the page at `from` unless given (null: left out). */
  post(
    path: string,
    fields: Record<string, string>,
    options?: { csrf?: string | null },
  ): Promise<{ status: number; headers: Headers; text: string }>;
  csrf(): Promise<string>;
}

export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no CSRF field on the page');
  return match[1]!;
}

export async function signInDashboard(s: TestServer, key: string): Promise<DashClient> {
  const res = await fetch(`${s.url}/dashboard/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key }).toString(),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
  const set = res.headers.get('set-cookie') ?? '';
  const cookie = set.split(';')[0]!;
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const r = await fetch(s.url + path, { headers: { ...headers, cookie }, redirect: 'manual' });
    return { status: r.status, headers: r.headers, text: await r.text() };
  };
  const client: DashClient = {
    cookie,
    get,
    csrf: async () => csrfOf((await get('/dashboard/products')).text),
    post: async (path, fields, options = {}) => {
      const body = new URLSearchParams(fields);
      if (options.csrf !== null) body.set('csrf', options.csrf ?? (await client.csrf()));
      const r = await fetch(s.url + path, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: body.toString(),
        redirect: 'manual',
      });
      return { status: r.status, headers: r.headers, text: await r.text() };
    },
  };
  return client;
}

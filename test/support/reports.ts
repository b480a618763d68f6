import type { TestServer } from './server.js';

/**
 * Waits until a report leaves pending, asking the API as a client would (each answer is an
 * event; the test's own timeout bounds the wait).
 */
export async function waitForReport(s: TestServer, id: string): Promise<any> {
  for (;;) {
    const res = await s.request('GET', `/v1/reports/${id}`);
    if (res.status !== 200) throw new Error(`GET /v1/reports/${id}: ${res.status} ${res.text}`);
    if (res.body.status !== 'pending') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Requests a report and waits for it to be generated. */
export async function generateReportVia(
  s: TestServer,
  body: Record<string, unknown>,
  key?: string,
): Promise<any> {
  const created = await s.request('POST', '/v1/reports', { body, ...(key ? { key } : {}) });
  if (created.status !== 201)
    throw new Error(`POST /v1/reports: ${created.status} ${created.text}`);
  return waitForReport(s, created.body.id);
}

/** Product names that break careless escaping (HTML, CSV, direction, surrogate pairs). */
export const HOSTILE_NAMES = [
  '<script>document.title="pwned"</script>',
  '<img src="http://127.0.0.1:9/x.png" onerror="document.title=1">',
  'Quote " and apostrophe \' & ampersand',
  'Emoji 👟🔥 trail shoe',
  'حذاء الجري السريع',
  'נעל ריצה',
  '=HYPERLINK("http://evil.example","click")',
  '+1 tall',
  '-20% off',
  '@SUM(A1:A2)',
  '\tTabbed',
] as const;

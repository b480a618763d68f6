import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { publishDiscovery } from '../../pipeline/discovery/index.js';
import { escapeHtml, jsonForScript } from '../../src/markup.js';
import { SLUG_PATTERN, assignSlugs, slugify } from '../../src/domain/discovery/slug.js';
import { addProduct } from '../support/discovery.js';
import { createPipelineContext, startTestStore } from '../support/pipeline.js';
import { unescapeHtml } from '../support/html.js';

function jsonLdBlocks(html: string): string[] {
  return [...html.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map(
    (m) => m[1]!,
  );
}

t.test('product and brand names are shown as text and cannot break out of JSON-LD', async (t) => {
  const s = await startTestStore(t);
  const brand = '<b>Evil</b> & "Co"';
  await addProduct(s.db, {
    id: 'x1',
    name: '<script>alert(1)</script>',
    description: 'Fine <!-- print --> & <img src=x onerror=alert(3)>',
    attributes: { brand, color: '"><svg onload=alert(4)>' },
  });
  await addProduct(s.db, {
    id: 'x2',
    name: '</script><script>alert(2)</script>',
    attributes: { brand },
  });
  await publishDiscovery(createPipelineContext(t, s.store, s.config));
  const root = s.config.PUBLIC_DIR;
  const slug = JSON.parse(fs.readFileSync(path.join(root, 'v1/index.json'), 'utf8')).brands[0].slug;
  t.equal(slug, 'b-evil-b-and-co');
  const page = fs.readFileSync(path.join(root, `v1/brands/${slug}/index.html`), 'utf8');
  t.notMatch(page, '<script>alert', 'no script element comes from a product');
  t.notMatch(page, '<img src=x', 'no element comes from a description');
  t.notMatch(page, '<svg', 'no element comes from an attribute');
  t.notMatch(page, '<b>Evil', 'no element comes from a brand name');
  t.match(page, '&lt;script&gt;alert(1)&lt;/script&gt;', 'the name is there, as text');
  t.match(page, '<h1>&lt;b&gt;Evil&lt;/b&gt; &amp; &quot;Co&quot;</h1>');
  t.equal(page.split('<script').length - 1, 1, 'one script element: the JSON-LD');
  t.equal(page.split('</script>').length - 1, 1, 'and it is closed once');
  const [block] = jsonLdBlocks(page);
  const data = JSON.parse(block!);
  const names = data['@graph'][1].itemListElement.map((e: any) => e.item.name);
  t.same(names.sort(), ['</script><script>alert(2)</script>', '<script>alert(1)</script>']);
  t.equal(data['@graph'][0].name, brand);
  t.equal(data['@graph'][1].itemListElement[0].item.offers.price, '10.00');

  const home = fs.readFileSync(path.join(root, 'index.html'), 'utf8');
  t.notMatch(home, '<b>Evil');
  t.match(home, '&lt;b&gt;Evil&lt;/b&gt; &amp; &quot;Co&quot;');
});

t.test('escapeHtml leaves no markup character and loses nothing', async () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      const e = escapeHtml(s);
      return (
        !/[<>"']/.test(e) && !/&(?!(amp|lt|gt|quot|#39|#96);)/.test(e) && unescapeHtml(e) === s
      );
    }),
  );
});

t.test('JSON-LD has no < > or & and parses back to the same value', async () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, s) => {
      const doc = { value, s, tail: `</script>${s}<!--` };
      const out = jsonForScript(doc).value;
      return (
        !/[<>&\u2028\u2029]/.test(out) && JSON.stringify(JSON.parse(out)) === JSON.stringify(doc)
      );
    }),
  );
});

t.test('every name slugs to lower-case ASCII words joined by -', async () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 70 }), (name) => {
      const slug = slugify(name);
      return SLUG_PATTERN.test(slug) && slug.length <= 70 && slugify(name) === slug;
    }),
  );
});

t.test('assigned slugs are distinct and do not depend on the order names arrive in', async () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.constantFrom('Acme', 'ACME', 'acme!', 'Acme 2', 'a-c-m-e', 'Ácme', 'x'), {
        minLength: 1,
      }),
      fc.array(fc.constantFrom<string>('acme', 'acme-2', 'x')),
      (names, taken) => {
        const a = assignSlugs(names, taken);
        const b = assignSlugs([...names].reverse(), taken);
        const slugs = [...a.values()];
        return (
          new Set(slugs).size === slugs.length &&
          slugs.every((s) => !taken.includes(s)) &&
          names.every((n) => a.get(n) === b.get(n))
        );
      },
    ),
  );
});

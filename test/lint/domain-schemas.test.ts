import path from 'node:path';
import { ESLint } from 'eslint';
import t from 'tap';
import { ROOT } from '../support/cli.js';

// The project's own ESLint configuration, asked about files that do not exist in the tree.
const eslint = new ESLint({ cwd: ROOT });

async function restrictedSyntax(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

const META =
  "import { z } from 'zod';\nexport const Name = z.string().meta({ description: 'x' });\n";
const DESCRIBE = "import { z } from 'zod';\nexport const Name = z.string().describe('x');\n";
const COERCE = "import { z } from 'zod';\nexport const Limit = z.coerce.number<string>().int();\n";

t.test('OpenAPI metadata on a domain schema is refused by the lint step', async (t) => {
  const meta = await restrictedSyntax('src/domain/products/bad-example.ts', META);
  t.equal(meta.length, 1);
  t.match(meta[0], /OpenAPI metadata lives in src\/http\/schemas/);
  const describe = await restrictedSyntax('src/domain/feeds/bad-example.ts', DESCRIBE);
  t.match(describe[0], /OpenAPI descriptions live in src\/http\/schemas/);
});

t.test('query-string coercion in the domain is refused by the lint step', async (t) => {
  const messages = await restrictedSyntax('src/domain/webhooks/bad-example.ts', COERCE);
  t.equal(messages.length, 1);
  t.match(messages[0], /Query-string coercion lives in src\/http\/schemas/);
});

t.test('the HTTP layer may describe and coerce', async (t) => {
  for (const code of [META, DESCRIBE, COERCE]) {
    t.same(await restrictedSyntax('src/http/schemas/bad-example.ts', code), []);
  }
});

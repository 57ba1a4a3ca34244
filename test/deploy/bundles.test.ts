import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the long-running processes bundles', () => {
  // decisions.md, "Where do the hot paths talk to Postgres?": Prisma is for the CLI and the tests.
  it('load no Prisma: the API and the dispatcher import neither its client nor its driver adapter', async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', 'api', 'dispatcher'], { cwd: ROOT, stdio: 'inherit' });
    for (const bundle of ['api', 'dispatcher']) {
      const code = await readFile(`${ROOT}dist/${bundle}.mjs`, 'utf8');
      expect(code.match(/^import .*@prisma.*$/gm) ?? [], bundle).toEqual([]);
      expect(code, bundle).not.toContain('PrismaClient');
    }
  });
});

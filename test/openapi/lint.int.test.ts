import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '@smsgw/api/testing';
import { openApiDocument } from '../../scripts/openapi.ts';

/** `redocly lint` (recommended ruleset, redocly.yaml at the root) on the document the API serves. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');

interface LintTotals {
  errors: number;
  warnings: number;
}

async function lint(document: object): Promise<{ totals: LintTotals; problems: { ruleId: string; message: string }[] }> {
  const file = join(directory, `openapi-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(document));
  // redocly exits 1 when it finds errors: its JSON report is what counts.
  const output = await promisify(execFile)(REDOCLY, ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return JSON.parse(output.stdout) as { totals: LintTotals; problems: { ruleId: string; message: string }[] };
}

let api: TestApi;
let directory: string;
beforeAll(async () => {
  api = await startTestApi({ PUBLIC_URL: 'https://sms.example.org' });
  directory = await mkdtemp(join(tmpdir(), 'smsgw-openapi-'));
});
afterAll(async () => {
  await api?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

describe('redocly lint', () => {
  it('finds no error in the OpenAPI document', async () => {
    const { totals, problems } = await lint(openApiDocument(api.app));
    expect(
      problems.filter((p) => (p as { severity?: string }).severity === 'error'),
      'redocly lint errors',
    ).toEqual([]);
    expect(totals.errors).toBe(0);
  }, 60_000);

  it('reports a document that breaks the rules (a response without a description, an operationId twice)', async () => {
    const document = openApiDocument(api.app) as unknown as {
      paths: Record<string, Record<string, { operationId?: string; responses: Record<string, { description?: string }> }>>;
    };
    delete document.paths['/api/v1/sms/{id}']!.get!.responses['200']!.description;
    document.paths['/api/v1/sms']!.get!.operationId = 'getSmsById';
    const { totals } = await lint(document);
    expect(totals.errors).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '@smsgw/api/testing';

/**
 * docs/http-api.md lists every route of the API: its route index names each operation of the
 * OpenAPI document that the API serves (/docs/json), with its operationId, and nothing else.
 */
const DOC = fileURLToPath(new URL('../../docs/http-api.md', import.meta.url));
/** Routes the index names that the OpenAPI document leaves out on purpose. */
const UNDOCUMENTED = ['GET /metrics', 'GET /docs', 'GET /docs/json'];

/** `METHOD /path` → operationId (or '' when the row names none) of the rows of the doc's route index. */
function routeIndex(markdown: string): Map<string, string> {
  const section = /^## Route index\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown)?.[1];
  if (!section) throw new Error('docs/http-api.md has no "## Route index" section');
  const rows = new Map<string, string>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const [routes = '', id = ''] = line.split(' | ');
    const operationId = /^`([A-Za-z0-9]+)`$/.exec(id.trim())?.[1] ?? '';
    for (const [, route] of routes.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE) \/[^`]*)`/g)) rows.set(route!, operationId);
  }
  return rows;
}

let api: TestApi;
let operations: Map<string, string>;
beforeAll(async () => {
  api = await startTestApi();
  const document = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, Record<string, { operationId?: string }>> };
  operations = new Map(
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, operation]) => [`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`, operation.operationId ?? ''] as const,
      ),
    ),
  );
});
afterAll(async () => {
  await api?.close();
});

describe('the route index of docs/http-api.md', () => {
  it('lists every operation of the OpenAPI document with its operationId', () => {
    const index = routeIndex(readFileSync(DOC, 'utf8'));
    const missing = [...operations].filter(([route, id]) => index.get(route) !== id).map(([route, id]) => `${route} (${id})`);
    expect(missing, 'add these routes to the "Route index" of docs/http-api.md, and describe them').toEqual([]);
  });

  it('lists no route the API does not have', () => {
    const index = routeIndex(readFileSync(DOC, 'utf8'));
    const extra = [...index.keys()].filter((route) => !operations.has(route) && !UNDOCUMENTED.includes(route));
    expect(extra).toEqual([]);
    expect(operations.size).toBeGreaterThan(50);
  });

  it('reads the rows of an index, and refuses a doc without one', () => {
    const index = routeIndex(
      '# API\n\n## Route index\n\n| route | id |\n|---|---|\n| `GET /a/:id` | `getAById` | user |\n| `GET /x`, `GET /y` | (none) | none |\n\n## Next\n| `GET /z` | `getZ` |\n',
    );
    expect([...index]).toEqual([
      ['GET /a/:id', 'getAById'],
      ['GET /x', ''],
      ['GET /y', ''],
    ]);
    expect(() => routeIndex('# API\n')).toThrow(/no "## Route index"/);
  });
});

import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/test-api.ts';
import { consoleApp, consoleRoot } from './console.ts';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
let api: TestApi;
beforeAll(async () => {
  execFileSync(process.execPath, ['scripts/build-console.mjs'], { cwd: ROOT, stdio: 'ignore' });
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const get = (url: string) => api.app.inject({ method: 'GET', url });

describe('the console at /console/', () => {
  it('redirects /console to /console/', async () => {
    const res = await get('/console');
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/console/');
  });

  it('serves index.html, revalidated on every load, for the root and for client-side routes', async () => {
    for (const url of ['/console/', '/console/messages', '/console/devices/']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.body).toContain('<div id="app"></div>');
    }
  });

  it('caches hashed assets for a year, and answers a missing asset 404 in JSON rather than the page', async () => {
    const asset = readdirSync(join(consoleRoot(), 'assets')).find((name) => name.endsWith('.js'))!;
    const res = await get(`/console/assets/${asset}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await get('/console/assets/nothing-here.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'not_found' });
  });

  it('keeps its routes out of the OpenAPI document', async () => {
    const document = (await get('/docs/json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/console'))).toEqual([]);
  });

  it('answers 503 in JSON, saying how to build it, when the build is missing', async () => {
    const app = Fastify({ logger: false });
    await app.register(consoleApp, { root: join(ROOT, 'no-such-console-build') });
    for (const url of ['/console/', '/console/send']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'service_unavailable', message: expect.stringContaining('scripts/build-console.mjs') });
    }
    expect((await app.inject({ method: 'GET', url: '/console' })).statusCode).toBe(301);
    await app.close();
  });
});

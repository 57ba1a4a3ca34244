import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '@smsgw/api/testing';
import { CLIENT_SCHEMA, REGENERATE, clientSchemaSource, openApiDocument } from '../../scripts/openapi.ts';

/** packages/client/src/openapi/schema.ts is what openapi-typescript makes of the current document. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('the generated client types', () => {
  it('are up to date with the routes', async () => {
    const generated = await clientSchemaSource(openApiDocument(api.app));
    expect(readFileSync(CLIENT_SCHEMA, 'utf8') === generated, `packages/client/src/openapi/schema.ts is out of date: run ${REGENERATE}`).toBe(true);
  });

  it('do not depend on the server the document names', async () => {
    const other = await startTestApi({ PUBLIC_URL: 'https://sms.example.org' });
    try {
      expect(await clientSchemaSource(openApiDocument(other.app))).toBe(await clientSchemaSource(openApiDocument(api.app)));
    } finally {
      await other.close();
    }
  });
});

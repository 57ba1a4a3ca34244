import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { operationId } from './openapi.ts';

/** The OpenAPI document at /docs/json (issue 13, item 2 in part). */
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
}
type Document = {
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
};

let api: TestApi;
let document: Document;
beforeAll(async () => {
  api = await startTestApi({ PUBLIC_URL: 'https://sms.example.org' });
  document = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json();
});
afterAll(async () => {
  await api?.close();
});

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));

describe('the OpenAPI document', () => {
  it('gives every operation an operationId, none twice', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/api/v1/sms/{id}']?.get?.operationId).toBe('getSmsById');
    expect(document.paths['/api/sms/send']?.post?.operationId).toBe('postSmsSend');
  });

  it('says which credentials each route takes', () => {
    expect(document.paths['/health']?.get?.security).toEqual([]);
    expect(document.paths['/api/v1/device/messages']?.get?.security).toEqual([{ deviceToken: [] }]);
    expect(document.paths['/mobile/v1/message']?.get?.security).toEqual([{ phoneToken: [] }]);
    // User routes take the document's default: an API key or a JWT.
    expect(document.paths['/api/v1/sms']?.get?.security).toBeUndefined();
  });

  it('lists SMS first, tags every operation, and names the public URL as its server', () => {
    expect(document.tags[0]?.name).toBe('sms');
    const untagged = operations().filter(({ operation }) => !operation.tags?.length).map(({ method, path }) => `${method} ${path}`);
    expect(untagged).toEqual([]);
    expect(document.servers).toEqual([{ url: 'https://sms.example.org', description: 'PUBLIC_URL' }]);
  });

  it('shows query parameters with a default as optional', () => {
    const parameters = document.paths['/api/v1/sms']?.get?.parameters ?? [];
    const limit = parameters.find((p) => p.in === 'query' && p.name === 'limit');
    expect(limit).toBeDefined();
    expect(limit?.required).not.toBe(true);
    const wait = document.paths['/api/v1/device/messages']?.get?.parameters?.find((p) => p.name === 'wait');
    expect(wait?.required).not.toBe(true);
  });
});

describe('examples', () => {
  it('offers a send body that is accepted as it stands', async () => {
    const raw = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> } }>>;
    };
    // @fastify/swagger moves a schema's single example to the media type, where Swagger UI reads it.
    const { example } = raw.paths['/api/sms/send']!.post!.requestBody!.content['application/json']!;
    expect(example).toEqual({ recipients: ['+15551234567'], body: 'Hello from smsgw' });
    const { apiKey } = await createTestUser(api.db);
    const res = await api.app.inject({ method: 'POST', url: '/api/sms/send', headers: { 'x-api-key': apiKey }, payload: example as object });
    expect(res.statusCode).toBe(200);
  });
});

describe('operationId', () => {
  it.each([
    ['GET', '/api/v1/sms', 'getSms'],
    ['POST', '/api/sms/send-template', 'postSmsSendTemplate'],
    ['DELETE', '/api/v1/groups/:id/members/:contactId', 'deleteGroupsByIdMembersByContactId'],
    ['GET', '/mobile/v1/message', 'getMobileMessage'],
    ['GET', '/api/mobile/v1/message', 'getApiMobileMessage'],
    ['GET', '/api/plans/quota', 'getPlansQuota'],
  ])('%s %s -> %s', (method, url, expected) => {
    expect(operationId(method, url)).toBe(expected);
  });
});

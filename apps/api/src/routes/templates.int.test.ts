import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

interface Template {
  id: string;
  name: string;
  body: string;
  variables: { reserved: string[]; custom: string[] };
  created_at: string;
  updated_at: string;
}

async function createTemplate(apiKey: string, body: string, name = 'tpl'): Promise<Template> {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/templates', { name, body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const NOT_FOUND = { error: 'not_found', message: 'Template not found' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('templates CRUD', () => {
  it('creates a template with 201 and lists its variables {reserved, custom} in order of first use', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const body = 'Hi {{name}}, your code is {{code}} ({{phone}}), valid {{minutes}} min. {{code}} {{name}}';

    const res = await call(api.app, apiKey, 'POST', '/api/v1/templates', { name: 'OTP', body });

    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(String),
      name: 'OTP',
      body,
      variables: { reserved: ['name', 'phone'], custom: ['code', 'minutes'] },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(await api.db.template.count({ where: { userId } })).toBe(1);
  });

  it('gets a template by id, and lists templates newest first with pagination', async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = await createTemplate(apiKey, 'a {{x}}', 'a');
    const b = await createTemplate(apiKey, 'b', 'b');
    const c = await createTemplate(apiKey, 'c {{phone}}', 'c');

    expect((await call(api.app, apiKey, 'GET', `/api/v1/templates/${a.id}`)).json()).toEqual(a);
    expect((await call(api.app, apiKey, 'GET', '/api/v1/templates')).json()).toEqual({ data: [c, b, a], total: 3, limit: 20, offset: 0 });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/templates?limit=1&offset=2')).json()).toEqual({ data: [a], total: 3, limit: 1, offset: 2 });
    expect(b.variables).toEqual({ reserved: [], custom: [] });
  });

  it('changes name and body, and the listed variables follow the new body', async () => {
    const { apiKey } = await createTestUser(api.db);
    const t = await createTemplate(apiKey, 'Hello {{name}}', 'before');

    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/templates/${t.id}`, { body: 'Code {{otp}} for {{phone}}' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: t.id, name: 'before', body: 'Code {{otp}} for {{phone}}', variables: { reserved: ['phone'], custom: ['otp'] } });
    const renamed = await call(api.app, apiKey, 'PATCH', `/api/v1/templates/${t.id}`, { name: 'after' });
    expect(renamed.json()).toMatchObject({ name: 'after', body: 'Code {{otp}} for {{phone}}' });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/templates/${t.id}`)).json()).toEqual(renamed.json());
  });

  it('deletes a template with 204, after which it is 404', async () => {
    const { apiKey } = await createTestUser(api.db);
    const t = await createTemplate(apiKey, 'bye');
    const res = await call(api.app, apiKey, 'DELETE', `/api/v1/templates/${t.id}`);
    expect(res.statusCode).toBe(204);
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const again = await call(api.app, apiKey, method, `/api/v1/templates/${t.id}`, payload);
      expect({ method, status: again.statusCode, body: again.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
  });

  it.each([
    ['an id that does not exist', () => randomUUID()],
    ['a malformed id', () => 'xyz'],
  ])('answers 404 for %s on GET, PATCH and DELETE', async (_what, id) => {
    const { apiKey } = await createTestUser(api.db);
    const url = `/api/v1/templates/${id()}`;
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await call(api.app, apiKey, method, url, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
  });

  it("answers 404 for another user's template on GET, PATCH and DELETE and leaves it unchanged", async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const t = await createTemplate(owner.apiKey, 'Secret {{code}}', 'private');
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'stolen' }], ['PATCH', { body: 'x' }], ['DELETE']] as const) {
      const res = await call(api.app, other.apiKey, method, `/api/v1/templates/${t.id}`, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
    expect((await call(api.app, other.apiKey, 'GET', '/api/v1/templates')).json()).toEqual({ data: [], total: 0, limit: 20, offset: 0 });
    expect((await call(api.app, owner.apiKey, 'GET', `/api/v1/templates/${t.id}`)).json()).toEqual(t);
  });
});

describe('template validation', () => {
  it.each(['{{1x}}', '{{ name }}', '{{a-b}}', '{{}}', '{{first name}}'])(
    'refuses the placeholder %s on create with 400 invalid_request naming it',
    async (placeholder) => {
      const { apiKey, userId } = await createTestUser(api.db);
      const res = await call(api.app, apiKey, 'POST', '/api/v1/templates', { name: 't', body: `Hello ${placeholder}` });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining(placeholder) });
      expect(await api.db.template.count({ where: { userId } })).toBe(0);
    },
  );

  it('refuses an invalid placeholder on patch with 400 invalid_request and keeps the old body', async () => {
    const { apiKey } = await createTestUser(api.db);
    const t = await createTemplate(apiKey, 'Good {{code}}');
    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/templates/${t.id}`, { body: 'Bad {{ code }}' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.stringContaining('{{ code }}') });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/templates/${t.id}`)).json()).toEqual(t);
  });

  it.each([
    ['an empty body', { name: 't', body: '' }],
    ['a body over 1600 code points', { name: 't', body: 'a'.repeat(1601) }],
    ['an empty name', { name: '', body: 'x' }],
    ['a missing body', { name: 't' }],
    ['an unknown field', { name: 't', body: 'x', lang: 'en' }],
    ['a NUL character', { name: 't', body: 'a\u0000b' }],
  ])('refuses %s on create with 400 invalid_request', async (_what, payload) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/templates', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.any(String) });
    expect(await api.db.template.count({ where: { userId } })).toBe(0);
  });

  it('accepts a body of exactly 1600 code points (emoji count as one each)', async () => {
    const { apiKey } = await createTestUser(api.db);
    const t = await createTemplate(apiKey, '😀'.repeat(1600));
    expect(t.body).toBe('😀'.repeat(1600));
  });

  it('refuses an empty patch and an unknown field on patch with 400 invalid_request', async () => {
    const { apiKey } = await createTestUser(api.db);
    const t = await createTemplate(apiKey, 'x');
    for (const payload of [{}, { lang: 'en' }]) {
      const res = await call(api.app, apiKey, 'PATCH', `/api/v1/templates/${t.id}`, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, type TestApi, type TestUser } from '@smsgw/api/testing';

/**
 * The query parameters of the OpenAPI document, held against what the API does: every read of the
 * user API refuses a parameter it does not name and a fraction for an integer, and every parameter
 * with a default is optional. The device protocols (device and phone tokens) stay lenient.
 */
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: { type?: string; default?: unknown };
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
}
type Document = { paths: Record<string, Record<string, Operation>> };

let api: TestApi;
let user: TestUser;
let document: Document;
beforeAll(async () => {
  api = await startTestApi();
  user = await createTestUser(api.db);
  document = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json() as Document;
});
afterAll(async () => {
  await api?.close();
});

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));

/** A device's or a phone's credentials: the device protocols, which the user API's policy leaves alone. */
const isDeviceProtocol = (operation: Operation) => (operation.security ?? []).some((scheme) => 'deviceToken' in scheme || 'phoneToken' in scheme);

/** The Vendel SDK's alias of the quota keeps the lenience of Vendel's own server (docs/decisions.md, "Reading"). */
const COMPATIBILITY = ['getPlansQuota'];

/** The reads of the user API under /api, with their path parameters filled in (an id nobody has). */
function userReads() {
  const reads = operations().filter(
    ({ path, method, operation }) =>
      method === 'get' && path.startsWith('/api/') && !isDeviceProtocol(operation) && !COMPATIBILITY.includes(operation.operationId),
  );
  return reads.map(({ path, operation }) => ({ operation, url: path.replace(/\{\w+\}/g, randomUUID()) }));
}

const get = (url: string) => api.app.inject({ method: 'GET', url, headers: { 'x-api-key': user.apiKey } });

/** The answer to a read, or none within 5 s (an event stream that opened instead of refusing). */
async function answer(url: string): Promise<{ status: number | 'none'; body: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const none = new Promise<{ status: 'none'; body: unknown }>((resolve) => (timer = setTimeout(() => resolve({ status: 'none', body: null }), 5000)));
  const response = get(url).then((r) => ({ status: r.statusCode, body: r.json() as unknown }));
  try {
    return await Promise.race([response, none]);
  } finally {
    clearTimeout(timer);
  }
}

describe('query parameters of the user API', () => {
  it('every read under /api refuses a query parameter it does not name, with 400 invalid_request naming it', async () => {
    const reads = userReads();
    expect(reads.length).toBeGreaterThan(20);
    const answers = await Promise.all(
      reads.map(async ({ operation, url }) => {
        return { operation: operation.operationId, ...(await answer(`${url}?no_such_parameter=1`)) };
      }),
    );
    const body = { error: 'invalid_request', message: "Unknown query parameter 'no_such_parameter'." };
    expect(answers.filter((answer) => answer.status !== 400 || JSON.stringify(answer.body) !== JSON.stringify(body))).toEqual([]);
  });

  it('every integer query parameter of a read refuses a fraction (offset=1.5) with 400 naming it', async () => {
    const cases = userReads().flatMap(({ operation, url }) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === 'query' && p.schema.type === 'integer')
        .map((p) => ({ operation: operation.operationId, url, name: p.name })),
    );
    expect(cases.map((c) => `${c.operation} ${c.name}`)).toEqual(
      expect.arrayContaining(['getContacts offset', 'getContacts limit', 'getSms offset', 'getSmsStats hours']),
    );
    const answers = await Promise.all(
      cases.map(async ({ operation, url, name }) => {
        const { status, body } = await answer(`${url}?${name}=1.5`);
        return { operation, name, status, body: body as { error?: string; message?: string } };
      }),
    );
    expect(answers.filter(({ name, status, body }) => status !== 400 || body.error !== 'invalid_request' || !body.message?.includes(`'${name}'`))).toEqual([]);
  });

  it('lists contacts from offset 1 when asked with a whole number, and refuses offset=1.5', async () => {
    expect((await get('/api/v1/contacts?offset=1')).json()).toMatchObject({ offset: 1, limit: 20 });
    const response = await get('/api/v1/contacts?offset=1.5');
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining("'offset'") });
  });
});

describe('query parameters of the device protocols and the Vendel alias', () => {
  it('the Vendel alias of the quota takes a parameter it does not name, as Vendel does', async () => {
    expect((await get('/api/plans/quota?no_such_parameter=1')).statusCode).toBe(200);
  });

  it('a device is not refused for a query parameter it adds', async () => {
    const response = await api.app.inject({
      method: 'GET',
      url: '/api/v1/device/messages?no_such_parameter=1',
      headers: { authorization: `Bearer ${user.devices[0]!.token}` },
    });
    expect(response.statusCode).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  it('shows every query parameter with a default as optional', () => {
    const withDefault = operations().flatMap(({ operation }) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === 'query' && p.schema.default !== undefined)
        .map((p) => ({ operation: operation.operationId, name: p.name, required: p.required ?? false })),
    );
    expect(withDefault.map((p) => `${p.operation} ${p.name}`)).toEqual(
      expect.arrayContaining(['getContacts limit', 'getContacts offset', 'getDeviceMessages wait']),
    );
    expect(withDefault.filter((p) => p.required)).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPairing } from '@smsgw/db';
import { createTestUser, startTestApi, type TestApi, type TestUser } from '../testing/test-api.ts';
import { enrolConnectedPhone, nextAddress, type EnrolledPhone } from '../testing/test-phone.ts';

/**
 * "Try it out" in /docs: every operation's request example, taken from the document, is accepted
 * as it stands by a signed-in caller (issue 13, item 2). Ids in paths and bodies are those of
 * resources made first; the request examples are the document's, unchanged otherwise.
 */
interface Media {
  example?: unknown;
}
interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

/** Operations whose example cannot be sent as it is here, and why. */
const SKIPPED: Record<string, string> = {
  postMobileInboundByDeviceIdBySecret:
    'the phone signs each webhook with its own key over the exact bytes (X-Signature); routes/device-protocols/sms-gate/inbound.int.test.ts sends signed ones',
  post20100401AccountsByAccountSidMessagesBySid:
    "a cancel needs a message that is still scheduled; compat/twilio/client-library.int.test.ts cancels one with Twilio's library",
};

let api: TestApi;
let document: Document;
let owner: TestUser;
let phone: EnrolledPhone;
const ids: Record<string, string> = {};

beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: async () => ['93.184.215.14'] });
  document = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json();
  owner = await createTestUser(api.db);
  phone = await enrolConnectedPhone(api.app, api.db, owner.userId);
  const create = async (url: string, payload: object) => {
    const res = await api.app.inject({ method: 'POST', url, headers: { 'x-api-key': owner.apiKey }, payload });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    return res.json<{ id: string }>().id;
  };
  ids.contact = await create('/api/v1/contacts', { name: 'Existing', phone: '+15550000001' });
  ids.group = await create('/api/v1/groups', { name: 'Existing' });
  ids.template = await create('/api/v1/templates', { name: 'Code', body: 'Your code is {{code}}.' });
  ids.webhook = await create('/api/v1/webhooks', { url: 'https://example.org/existing', events: ['message.sent'] });
  ids.device = owner.deviceId!;
  ids.accountSid = (await api.app.inject({ method: 'GET', url: '/api/v1/twilio', headers: { 'x-api-key': owner.apiKey } })).json<{
    account_sid: string;
  }>().account_sid;
});
afterAll(async () => {
  await api?.close();
});

/** The resource a path's `{id}` names, by the path's first segment after the version. */
function pathId(path: string): string {
  const resource = /^\/api\/v1\/([a-z-]+)\//.exec(path)?.[1];
  const id = { contacts: ids.contact, groups: ids.group, templates: ids.template, webhooks: ids.webhook, devices: ids.device }[resource ?? ''];
  if (!id) throw new Error(`no resource made for ${path}`);
  return id;
}

/** The example with the ids of this test's resources where it names some. */
function withOwnIds(example: unknown, path: string): unknown {
  if (typeof example !== 'object' || example === null || Array.isArray(example)) return example;
  const body = { ...(example as Record<string, unknown>) };
  if ('template_id' in body) body.template_id = ids.template;
  if ('group_ids' in body) body.group_ids = [ids.group];
  if ('device_id' in body) body.device_id = ids.device;
  if ('contact_ids' in body) body.contact_ids = [ids.contact];
  if (path === '/mobile/v1/device' && 'id' in body) body.id = phone.id;
  return body;
}

async function credentials(operation: Operation): Promise<Record<string, string>> {
  const scheme = Object.keys(operation.security?.[0] ?? { user: [] })[0];
  if (scheme === 'deviceToken') return { authorization: `Bearer ${owner.devices[0]!.token}` };
  if (scheme === 'phoneToken' && operation.operationId === 'postMobileDevice') {
    const { code } = await createPairing(api.db, { userId: owner.userId, ttlSeconds: 600 });
    return { authorization: `Code ${code}` };
  }
  if (scheme === 'phoneToken') return { authorization: `Bearer ${phone.token}` };
  if (scheme === 'twilioBasic') return { authorization: `Basic ${Buffer.from(`${ids.accountSid}:${owner.apiKey}`).toString('base64')}` };
  return { 'x-api-key': owner.apiKey };
}

const withBodies = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.requestBody)
      .flatMap(([method, operation]) => Object.entries(operation.requestBody!.content).map(([type, media]) => ({ path, method, operation, type, media }))),
  );

describe('request examples', () => {
  it('are given for every operation with a body, in each of its media types', () => {
    expect(withBodies().length).toBeGreaterThan(20);
    const missing = withBodies()
      .filter(({ media }) => media.example === undefined)
      .map(({ method, path, type }) => `${method} ${path} (${type})`);
    expect(missing).toEqual([]);
  });

  it('are accepted as they stand: no 400 or 422 for any of them', async () => {
    const refused: string[] = [];
    for (const { path, method, operation, type, media } of withBodies()) {
      if (SKIPPED[operation.operationId]) continue;
      const url = path.replace('{id}', () => pathId(path)).replace('{AccountSid}', ids.accountSid!);
      const example = withOwnIds(media.example, path);
      const encoded = type === 'application/x-www-form-urlencoded' ? new URLSearchParams(example as Record<string, string>).toString() : undefined;
      const res = await api.app.inject({
        method: method.toUpperCase() as 'POST',
        url,
        headers: { ...(await credentials(operation)), 'content-type': type },
        payload: encoded ?? (typeof example === 'string' ? example : JSON.stringify(example)),
        remoteAddress: nextAddress(),
      });
      if (res.statusCode >= 400) refused.push(`${method.toUpperCase()} ${path} (${type}): ${res.statusCode} ${res.body}`);
    }
    expect(refused).toEqual([]);
  });

  it('are refused when broken: the send example without its recipients', async () => {
    const { example } = document.paths['/api/sms/send']!.post!.requestBody!.content['application/json']!;
    const { recipients: _, ...broken } = example as Record<string, unknown>;
    const res = await api.app.inject({ method: 'POST', url: '/api/sms/send', headers: { 'x-api-key': owner.apiKey }, payload: broken });
    expect(res.statusCode).toBe(400);
  });
});

describe('response examples', () => {
  it.each([
    ['/api/sms/send', 'post', '200'],
    ['/api/v1/sms/{id}', 'get', '200'],
    ['/api/v1/sms', 'get', '200'],
  ])('%s %s %s has one', (path, method, status) => {
    expect(document.paths[path]![method]!.responses[status]!.content!['application/json']!.example).toBeDefined();
  });

  it('an error has one per code: GET /api/v1/sms/{id} 404', () => {
    const media = document.paths['/api/v1/sms/{id}']!.get!.responses['404']!.content!['application/json']! as { examples?: Record<string, { value: unknown }> };
    expect(media.examples).toEqual({ not_found: { summary: 'Not found', value: { error: 'not_found', message: 'Not found' } } });
  });
});

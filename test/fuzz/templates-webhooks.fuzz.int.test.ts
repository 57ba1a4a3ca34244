/**
 * Fuzz of the templates and webhooks routes: random and hostile bodies, URLs, queries and ids,
 * valid ones mixed in, must never get a 5xx, and every 4xx must be `{error, message}`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE, type Resolver } from '@smsgw/core';
import { call, createTestUser } from '@smsgw/api/testing';
import { IdPool, hostileString, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, userAuth } from './requests.ts';

// The stub DNS: every name is public but those that say otherwise, so that no lookup leaves the machine.
const resolver: Resolver = async (hostname) => {
  if (hostname.includes('nowhere')) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  if (hostname.includes('empty')) return [];
  if (hostname.includes('internal')) return ['10.1.2.3', '93.184.215.14'];
  return ['93.184.215.14'];
};

let api: FuzzApi;
let headers: ReturnType<typeof userAuth>;
const templates = new IdPool();
const webhooks = new IdPool();
const deliveries = new IdPool();

beforeAll(async () => {
  api = await startFuzzApi({}, { webhookResolver: resolver });
  const { apiKey } = await createTestUser(api.db, { devices: 0 });
  headers = userAuth(apiKey, api.config.JWT_SECRET);
  for (const body of ['Hello {{name}}', 'Code {{code}} for {{phone}}', 'plain']) {
    const res = await call(api.app, apiKey, 'POST', '/api/v1/templates', { name: body.slice(0, 5), body });
    expect(res.statusCode).toBe(201);
    templates.add(res.json().id);
  }
  for (const url of ['https://hooks.example/a', 'https://hooks.example/b', 'https://hooks.example/c', 'https://hooks.example/d']) {
    const res = await call(api.app, apiKey, 'POST', '/api/v1/webhooks', { url, events: ['message.sent'] });
    expect(res.statusCode).toBe(201);
    webhooks.add(res.json().id);
    const test = await call(api.app, apiKey, 'POST', `/api/v1/webhooks/${res.json().id}/test`);
    expect(test.statusCode).toBe(202);
    deliveries.add(test.json().id);
  }
});
afterAll(async () => {
  await api?.close();
});

const pages = { limit: plausible.limit, offset: plausible.offset };

const PLACEHOLDERS = [
  '{{name}}',
  '{{phone}}',
  '{{code}}',
  '{{ name }}',
  '{{first_name}}',
  '{{1x}}',
  '{{a-b}}',
  '{{}}',
  '{{',
  '}}',
  '{{{x}}}',
  '{{name}',
  '{name}}',
  '\\{{x}}',
];
const templateText = fc
  .array(fc.oneof(fc.constantFrom(...PLACEHOLDERS), fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 5 })
  .map((parts) => parts.join(' '));

describe('templates routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const body = shaped({ name: fc.string({ minLength: 1, maxLength: 40 }), body: templateText });
    const id = pathId(templates).map((id) => `/api/v1/templates/${id}`);
    const requests = fc.oneof(
      route({ method: 'POST', path: '/api/v1/templates', body, headers, creates: templates }),
      route({ method: 'GET', path: '/api/v1/templates', query: pages, headers }),
      route({ method: 'GET', path: id, headers }),
      route({ method: 'PATCH', path: id, body, headers }),
      route({ method: 'DELETE', path: id, headers }),
    );
    await fuzz(api, requests, { numRuns: 200 });
  });
});

const URLS = [
  'https://hooks.example/x',
  'http://hooks.example:8080/a?b=c#d',
  'https://internal.example/',
  'https://nowhere.example/',
  'https://empty.example/',
  'http://127.0.0.1/',
  'http://[::1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[2002:7f00:1::]/',
  'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
  'http://[fe80::1%25eth0]/',
  'http://0x7f000001/',
  'http://2130706433/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'https://93.184.215.14/',
  'ftp://hooks.example/',
  'javascript:alert(1)',
  'https://user:pass@hooks.example/',
  'https://hooks.example:99999/',
  'https://hooks.example:0/',
  '//hooks.example/',
  'https:/hooks.example',
  'https://',
  'https://hooks..example/',
  'https://-hooks.example/',
  'https://hooks.example%2F@evil.example/',
  'https://xn--nxasmq6b.example/',
  'https://ドメイン.example/',
  'https://HOOKS.EXAMPLE./',
  `https://hooks.example/${'a'.repeat(1990)}`,
  `https://hooks.example/${'a'.repeat(2001)}`,
  'http://[::]/',
  'http://0.0.0.0/',
  'http://[v1.x]/',
  'https://hooks.example/%ZZ',
  'http://%31%32%37.0.0.1/',
];
const url = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...URLS) },
  { weight: 2, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
);
const events = mostly<string[]>(
  fc.subarray([...SUBSCRIBABLE_EVENT_TYPES], { minLength: 1 }),
  fc.constant([]),
  fc.constant(['message.sent', 'message.sent']),
  fc.array(fc.oneof(fc.constantFrom(TEST_EVENT_TYPE, 'message.*', 'MESSAGE.SENT'), hostileString), { maxLength: 3 }),
);

describe('webhooks routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const id = pathId(webhooks);
    const webhook = (suffix = '') => id.map((id) => `/api/v1/webhooks/${id}${suffix}`);
    const change = shaped({ url, events, description: fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null)), enabled: fc.boolean() });
    const requests = fc.oneof(
      route({ method: 'POST', path: '/api/v1/webhooks', body: shaped({ url, events, description: fc.string({ maxLength: 40 }) }), headers, creates: webhooks }),
      route({ method: 'GET', path: '/api/v1/webhooks', query: pages, headers }),
      route({ method: 'GET', path: webhook(), headers }),
      route({ method: 'PATCH', path: webhook(), body: change, headers }),
      route({ method: 'DELETE', path: webhook(), headers }),
      route({ method: 'POST', path: webhook('/rotate-secret'), headers }),
      route({ method: 'POST', path: webhook('/test'), headers, creates: deliveries }),
      route({ method: 'GET', path: webhook('/deliveries'), query: pages, headers }),
      route({
        method: 'POST',
        path: fc.tuple(id, pathId(deliveries)).map(([id, delivery]) => `/api/v1/webhooks/${id}/deliveries/${delivery}/retry`),
        headers,
      }),
    );
    await fuzz(api, requests, { numRuns: 300 });
  });
});

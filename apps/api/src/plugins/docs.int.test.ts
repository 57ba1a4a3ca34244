import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { ERRORS, type ErrorCode } from '@smsgw/core';
import { operationId } from './openapi.ts';
import { errorExample } from './openapi-errors.ts';

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
    const untagged = operations()
      .filter(({ operation }) => !operation.tags?.length)
      .map(({ method, path }) => `${method} ${path}`);
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

type Raw = {
  components: { schemas: Record<string, unknown> };
  webhooks: Record<string, { post: { parameters: { name: string; in: string }[]; requestBody: { content: Record<string, { schema: { $ref?: string } }> } } }>;
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
        responses: Record<
          string,
          {
            description: string;
            content?: Record<
              string,
              { schema: { $ref?: string; anyOf?: unknown[] }; example?: unknown; examples?: Record<string, { summary: string; value: unknown }> }
            >;
          }
        >;
      }
    >
  >;
};
const raw = () => document as unknown as Raw;

/** The enum of `error` in an error response's schema (`allOf: [Error, {properties: {error: {enum}}}]`, maybe in an `anyOf`). */
function errorEnum(schema: unknown): unknown {
  const members = (schema as { anyOf?: unknown[] }).anyOf ?? [schema];
  for (const member of members as { allOf?: { properties?: { error?: { enum?: unknown } } }[] }[]) {
    const narrowed = member.allOf?.find((part) => part.properties?.error?.enum)?.properties?.error?.enum;
    if (narrowed) return narrowed;
  }
  return undefined;
}

describe('named schemas, responses and webhooks', () => {
  it('names the shared schemas in components and refers to them', () => {
    const names = Object.keys(raw().components.schemas);
    for (const name of [
      'Message',
      'MessagePage',
      'SendRequest',
      'SendAccepted',
      'Error',
      'Device',
      'Contact',
      'ContactPage',
      'Group',
      'Template',
      'Webhook',
      'WebhookDelivery',
      'Quota',
      'ReceivedSms',
      'ApiKey',
      'Pairing',
    ]) {
      expect(names).toContain(name);
    }
    const paths = raw().paths;
    expect(paths['/api/sms/send']!.post!.requestBody!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/SendRequest' });
    expect(paths['/api/v1/sms/{id}']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Message' });
    expect(paths['/api/v1/sms']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/MessagePage' });
    expect(JSON.stringify(raw().components.schemas)).not.toContain('"$id"');
  });

  it('describes every response, and each error with its codes from the catalogue', () => {
    for (const [path, methods] of Object.entries(raw().paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
          expect(response.description, `${method} ${path} ${status}`).not.toMatch(/^(OK|Created|Accepted|No Content)\.$/);
        }
      }
    }
    const send = raw().paths['/api/sms/send']!.post!.responses;
    expect(send['402']!.description).toContain('`quota_exceeded`');
    expect(send['503']!.description).toContain('`no_devices`');
    const template = raw().paths['/api/sms/send-template']!.post!.responses['400']!;
    expect(template.description).toContain('`template_not_found`');
    expect(template.content!['application/json']!.schema.anyOf).toHaveLength(2);
  });

  it('gives every error response one named example per code it lists, the body the catalogue makes for it, and those codes as the enum of error', () => {
    const checked: string[] = [];
    for (const [path, methods] of Object.entries(raw().paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const codes = [...response.description.matchAll(/^- `(\w+)`/gm)].map((match) => match[1] as ErrorCode);
          if (Number(status) < 400 || !response.description.includes('error code:')) continue;
          const media = response.content?.['application/json'];
          const where = `${method} ${path} ${status}`;
          expect(codes.length, where).toBeGreaterThan(0);
          expect(media?.example, where).toBeUndefined();
          expect(media?.examples, where).toEqual(Object.fromEntries(codes.map((code) => [code, { summary: ERRORS[code].message, value: errorExample(code) }])));
          expect(errorEnum(media?.schema), where).toEqual(codes.filter((code) => !('messageOnly' in ERRORS[code])));
          checked.push(where);
        }
      }
    }
    expect(checked.length).toBeGreaterThan(150);
    const send = raw().paths['/api/sms/send']!.post!.responses['400']!.content!['application/json']!.examples!;
    expect(Object.keys(send)).toEqual(
      expect.arrayContaining(['invalid_request', 'invalid_phone_number', 'too_many_recipients', 'group_not_found', 'device_not_found']),
    );
    expect(send.invalid_phone_number).toEqual({
      summary: 'Phone number must be in E.164 format',
      value: { error: 'invalid_phone_number', message: 'Phone number must be in E.164 format' },
    });
    const template = raw().paths['/api/sms/send-template']!.post!.responses['400']!.content!['application/json']!.examples!;
    expect(template.template_not_found!.value).toEqual({ message: 'Template not found.' });
  });

  it('has a webhooks section with every event the gateway posts, its payload and the signature headers', () => {
    expect(Object.keys(raw().webhooks).sort()).toEqual([
      'device.degraded',
      'device.offline',
      'device.online',
      'message.cancelled',
      'message.delivered',
      'message.failed',
      'message.received',
      'message.sent',
      'webhook.test',
    ]);
    const delivered = raw().webhooks['message.delivered']!.post;
    expect(delivered.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['header:webhook-id', 'header:webhook-timestamp', 'header:webhook-signature']);
    expect(delivered.requestBody.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/MessageDeliveredEvent' });
    expect(raw().components.schemas.MessageReceivedEvent).toMatchObject({ properties: { data: { $ref: '#/components/schemas/ReceivedSms' } } });
  });

  it('takes the contact import as JSON or as text/csv', () => {
    const content = raw().paths['/api/v1/contacts/import']!.post!.requestBody!.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/csv']);
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

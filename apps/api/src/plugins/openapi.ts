import type { FastifySchema } from 'fastify';
import { referenceNamed } from './openapi-components.ts';
import { documentResponses, type ResponseDoc } from './openapi-errors.ts';

/**
 * How smsgw's routes appear in the OpenAPI document, decided from their URLs at one place: an
 * operationId for each, the credentials each takes, the tags in the order a reader needs them, and
 * query parameters with a default shown as optional.
 */

/** Tags, SMS first (the document lists them in this order). */
export const TAGS = [
  { name: 'sms', description: 'Send text messages and follow them.' },
  { name: 'quota', description: 'The monthly message quota.' },
  { name: 'contacts', description: 'The address book.' },
  { name: 'groups', description: 'Contact groups, to send to at once.' },
  { name: 'templates', description: 'Message templates with {{variables}}.' },
  { name: 'opt-outs', description: 'Numbers that opted out (STOP): sends to them fail at once.' },
  { name: 'settings', description: 'Your settings: opt-out keywords, sticky sender.' },
  { name: 'webhooks', description: 'Events posted to your endpoints, signed (Standard Webhooks).' },
  { name: 'devices', description: 'Your phones and modems, and pairing a phone.' },
  { name: 'api-keys', description: 'API keys.' },
  { name: 'auth', description: 'JWTs from an API key.' },
  { name: 'device', description: "The native device protocol, for smsgw's own device agents (device token)." },
  { name: 'mobile', description: "The SMS Gate app's mobile API (phone token): what a paired Android phone calls." },
  {
    name: 'sms-gate-client',
    description:
      "SMS Gate's client API at /3rdparty/v1, for its libraries and integrations (docs/compatibility.md): Basic (user name or id : API key) or Bearer; errors are {message}.",
  },
  {
    name: 'twilio',
    description:
      "Twilio's Messages API at /2010-04-01, for its libraries (docs/compatibility.md), and your Twilio credentials at /api/v1/twilio: Basic (Account SID : Auth Token or API key); form-encoded bodies; errors are {code, message, more_info, status}.",
  },
  { name: 'health', description: 'Liveness and readiness.' },
  { name: 'kannel', description: "Kannel's sendsms, for clients written for Kannel (docs/compatibility.md); credentials in the request." },
];

export const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (smsgw_sk_…).' },
  bearer: { type: 'http', scheme: 'bearer', description: 'An API key or a JWT from POST /api/v1/auth/token.' },
  deviceToken: { type: 'http', scheme: 'bearer', description: 'A device token (smsgw_dt_…), from creating a device.' },
  phoneToken: { type: 'http', scheme: 'bearer', description: 'The token an SMS Gate phone got when it registered.' },
  basic: { type: 'http', scheme: 'basic', description: "SMS Gate's client API only: your user name (or user id) and an API key as the password." },
  twilioBasic: {
    type: 'http',
    scheme: 'basic',
    description: "Twilio's Messages API only: your Account SID and your Auth Token (or an API key) as the password.",
  },
} as const;

const PARAMETER = /^:(\w+)$/;

/** `getSmsById` for GET /api/v1/sms/:id; the SMS Gate prefix `/api/mobile/v1` is kept apart from `/mobile/v1`. */
export function operationId(method: string, url: string): string {
  const segments = url.split('/').filter(Boolean);
  const words = (segments[0] === 'api' && segments[1] === 'mobile' ? ['api', ...segments.slice(1)] : segments.filter((s) => s !== 'api'))
    .filter((s) => !/^v\d+$/.test(s))
    .map((s) => {
      // Twilio's paths end in `.json` (`Messages/:Sid.json`): the suffix is no part of the name.
      const parameter = PARAMETER.exec(s.replace(/\.json$/, ''));
      return parameter ? `by-${parameter[1]}` : s.replace(/\.json$/, '');
    });
  const camel = words
    .flatMap((w) => w.split(/[-_]/))
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
  return `${method.toLowerCase()}${camel}`;
}

type Security = Record<string, string[]>[];

/** The credentials a route takes: none for health and the signed phone webhook, a device or phone token for the device protocols. */
export function securityFor(url: string): Security | undefined {
  if (/^\/(health|ready|metrics)$/.test(url) || url.startsWith('/docs') || url === '/3rdparty/v1/health') return [];
  if (url.startsWith('/3rdparty/v1')) return [{ basic: [] }, { bearer: [] }];
  if (url.startsWith('/cgi-bin/')) return []; // Kannel: the user name and an API key are variables of the request
  if (url.startsWith('/2010-04-01/')) return [{ twilioBasic: [] }];
  if (url.startsWith('/api/v1/device/')) return [{ deviceToken: [] }];
  if (/^\/(api\/)?mobile\/v1\/inbound\//.test(url)) return [];
  if (/^\/(api\/)?mobile\/v1\/device$/.test(url)) return [{ phoneToken: [] }, {}]; // registering: a pairing code in the body, or its token
  if (/^\/(api\/)?mobile\//.test(url)) return [{ phoneToken: [] }];
  return undefined; // the document's default: an API key or a JWT
}

interface ObjectSchema {
  type?: string;
  properties?: Record<string, { default?: unknown }>;
  required?: string[];
}

/** A query schema whose parameters with a default are not listed as required (a copy; the route's own is unchanged). */
export function optionalDefaults(schema: unknown): unknown {
  const object = schema as ObjectSchema | undefined;
  if (!object?.properties || !object.required) return schema;
  const required = object.required.filter((name) => object.properties![name]?.default === undefined);
  return { ...object, required };
}

type Json = Record<string, unknown>;

/**
 * A body with `$ref`s; a union whose members name a `contentMediaType` (the CSV of a contact import)
 * becomes one media type per member, the others staying `application/json`.
 */
export function documentBody(body: unknown, components: Json): unknown {
  const named = referenceNamed(body, components) as Json;
  const members = named.anyOf as Json[] | undefined;
  const typed = members?.filter((member) => typeof member.contentMediaType === 'string') ?? [];
  if (!members || typed.length === 0) return named;
  const json = members.filter((member) => !typed.includes(member));
  return {
    content: {
      ...(json.length > 0 && { 'application/json': { schema: json.length === 1 ? json[0] : { anyOf: json } } }),
      ...Object.fromEntries(typed.map((member) => [member.contentMediaType as string, { schema: member }])),
    },
  };
}

/** Where documentRoute leaves what applyDocs puts in place: @fastify/swagger copies an operation's `x-` keys as they are. */
const DOCS = 'x-smsgw-docs';

interface OperationDocs {
  body?: unknown;
  responses: Record<string, ResponseDoc>;
}

/** The body's example, taken off its root (where @fastify/swagger would drop it next to a `$ref`). */
function withoutExamples(body: unknown): { schema: unknown; example?: unknown } {
  const { examples, ...schema } = body as Json;
  return Array.isArray(examples) ? { schema, example: examples[0] } : { schema: body };
}

interface RouteSchema extends FastifySchema {
  operationId?: string;
  tags?: string[];
  summary?: string;
}

/** @fastify/swagger's `transform`: the route's schema as the document shows it (the route's own is unchanged). */
export function documentRoute({
  schema,
  url,
  route,
  openapiObject,
}: {
  schema: FastifySchema;
  url: string;
  route: { method: string | string[] };
  openapiObject?: { components?: { schemas?: Json } };
}) {
  const own = schema as RouteSchema;
  const method = Array.isArray(route.method) ? route.method[0]! : route.method;
  const security = securityFor(url);
  const tags = own.tags ?? (/^\/(api\/)?mobile\//.test(url) ? ['mobile'] : undefined);
  const id = own.operationId ?? operationId(method, url);
  const components = openapiObject?.components?.schemas;
  if (!components) throw new Error('documentRoute is the transform of an OpenAPI (not Swagger 2) document.');
  const validatesInput = [own.body, own.querystring, own.params].some((part) => part !== undefined);
  const body = schema.body === undefined ? undefined : withoutExamples(documentBody(schema.body, components));
  const responses = documentResponses(
    Object.fromEntries(Object.entries((schema.response ?? {}) as Json).map(([status, response]) => [status, referenceNamed(response, components) as Json])),
    { operation: id, summary: own.summary, validatesInput, components },
  );
  const docs: OperationDocs = { responses: responses.docs, ...(body?.example !== undefined && { body: body.example }) };
  return {
    url,
    schema: {
      ...schema,
      operationId: id,
      ...(schema.querystring !== undefined && { querystring: optionalDefaults(schema.querystring) }),
      ...(body && { body: body.schema }),
      // A route that declares no response keeps @fastify/swagger's own (a static route the document hides, say).
      ...(Object.keys(responses.schemas).length > 0 && { response: responses.schemas }),
      ...(security && { security }),
      ...(tags && { tags }),
      [DOCS]: docs,
    } as FastifySchema,
  };
}

interface Operation {
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses?: Record<string, { description: string; content?: Record<string, { example?: unknown; examples?: ResponseDoc['examples'] }> }>;
  [DOCS]?: OperationDocs;
}

/** @fastify/swagger's `transformObject`: each operation's descriptions and examples put in place. */
export function applyDocs<T extends { paths?: object }>(document: T): T {
  for (const methods of Object.values((document.paths ?? {}) as Record<string, object>)) {
    for (const operation of Object.values(methods) as Operation[]) {
      const docs = operation[DOCS];
      if (!docs) continue;
      delete operation[DOCS];
      // A form-encoded body (Twilio's) carries the same example as a JSON one.
      const content = operation.requestBody?.content;
      const media = content?.['application/json'] ?? content?.['application/x-www-form-urlencoded'];
      if (media && docs.body !== undefined) media.example = docs.body;
      for (const [status, doc] of Object.entries(docs.responses)) {
        const response = operation.responses?.[status];
        if (!response) continue;
        response.description = doc.description;
        for (const media of Object.values(response.content ?? {})) {
          if (doc.examples) {
            delete media.example;
            media.examples = doc.examples;
          } else if (doc.example !== undefined) {
            media.example = doc.example;
          }
        }
      }
    }
  }
  return document;
}

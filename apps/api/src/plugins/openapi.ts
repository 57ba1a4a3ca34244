import type { FastifySchema } from 'fastify';

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
  { name: 'webhooks', description: 'Events posted to your endpoints, signed (Standard Webhooks).' },
  { name: 'devices', description: 'Your phones and modems, and pairing a phone.' },
  { name: 'api-keys', description: 'API keys.' },
  { name: 'auth', description: 'JWTs from an API key.' },
  { name: 'device', description: 'The native device protocol, for smsgw\'s own device agents (device token).' },
  { name: 'mobile', description: 'The SMS Gate app\'s mobile API (phone token): what a paired Android phone calls.' },
  { name: 'health', description: 'Liveness and readiness.' },
];

export const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (smsgw_sk_…).' },
  bearer: { type: 'http', scheme: 'bearer', description: 'An API key or a JWT from POST /api/v1/auth/token.' },
  deviceToken: { type: 'http', scheme: 'bearer', description: 'A device token (smsgw_dt_…), from creating a device.' },
  phoneToken: { type: 'http', scheme: 'bearer', description: 'The token an SMS Gate phone got when it registered.' },
} as const;

const PARAMETER = /^:(\w+)$/;

/** `getSmsById` for GET /api/v1/sms/:id; the SMS Gate prefix `/api/mobile/v1` is kept apart from `/mobile/v1`. */
export function operationId(method: string, url: string): string {
  const segments = url.split('/').filter(Boolean);
  const words = (segments[0] === 'api' && segments[1] === 'mobile' ? ['api', ...segments.slice(1)] : segments.filter((s) => s !== 'api'))
    .filter((s) => !/^v\d+$/.test(s))
    .map((s) => {
      const parameter = PARAMETER.exec(s);
      return parameter ? `by-${parameter[1]}` : s;
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
  if (/^\/(health|ready|metrics)$/.test(url) || url.startsWith('/docs')) return [];
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

/** @fastify/swagger's `transform`: the route's schema as the document shows it. */
export function documentRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: { method: string | string[] } }) {
  const method = Array.isArray(route.method) ? route.method[0]! : route.method;
  const security = securityFor(url);
  const tags = (schema as { tags?: string[] }).tags ?? (/^\/(api\/)?mobile\//.test(url) ? ['mobile'] : undefined);
  return {
    url,
    schema: {
      ...schema,
      operationId: (schema as { operationId?: string }).operationId ?? operationId(method, url),
      ...(schema.querystring !== undefined && { querystring: optionalDefaults(schema.querystring) }),
      ...(security && { security }),
      ...(tags && { tags }),
    } as FastifySchema,
  };
}

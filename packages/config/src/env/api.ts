import { Type } from 'typebox';
import { Integer } from './integer.ts';

export const ApiEnv = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', description: 'Address the API listens on (0.0.0.0 in containers).' }),
  PORT: Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'Port the API listens on.' }),
  JWT_SECRET: Type.String({ minLength: 32, description: 'HS256 secret for JWTs, at least 32 characters. Required.' }),
  JWT_TTL_SECONDS: Integer({ default: 900, maximum: 86400, description: 'Lifetime of a JWT issued by POST /api/v1/auth/token.' }),
  RATE_LIMIT_PER_MINUTE: Integer({
    default: 1200,
    description: 'Requests per minute per user, whichever key or JWT it uses (per address when unauthenticated).',
  }),
  DEVICE_RATE_LIMIT_PER_MINUTE: Integer({
    default: 30000,
    description: 'Requests per minute per device token: a device makes requests as its user sends messages, so this only stops a runaway.',
  }),
  AUTH_FAILURES_PER_MINUTE: Integer({
    default: 20,
    description:
      'Refused credentials (API key, JWT, device or phone token) per minute from one client address (IPv6: per /64); past it each further refusal is answered 429 with Retry-After instead of 401 until the minute ends. Valid credentials are always served.',
  }),
  REGISTRATIONS_PER_MINUTE_PER_ADDRESS: Integer({
    default: 120,
    minimum: 1,
    description:
      'SMS Gate phone registrations (POST /device) per minute from one client address (IPv6: per /64), past it 429: what keeps guessing the 8-digit pairing codes slow. 120 enrols 5,000 phones behind one NAT in about 42 minutes (docs/decisions.md, "Registration limits").',
  }),
  REGISTRATIONS_PER_MINUTE_PER_PAIRING: Integer({
    default: 10,
    minimum: 1,
    description:
      'SMS Gate phone registrations per minute with one pairing code or token, past it 429: a pairing registers one phone, so this only stops one code being hammered.',
  }),
  SEND_ASSIGN_MIN_RECIPIENTS: Integer({
    default: 2,
    minimum: 0,
    maximum: 1000000,
    description:
      'A send due now (no send_at) of at least this many messages is assigned to devices by the API in the request, as the dispatcher would, when a device is free; what must wait goes to the dispatcher. The default leaves a one-message send to the dispatcher (its request stays cheap); 0: the dispatcher assigns every message.',
  }),
  REDIS_WAIT_REPLICAS: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10,
      description:
        "Replicas that must have a device's reports (Redis WAIT) before its request is answered, so that a failover of the primary loses none. Default: 1 with REDIS_CLUSTER_NODES or REDIS_SENTINELS, 0 with REDIS_URL. When fewer acknowledge within half of REDIS_COMMAND_TIMEOUT_MS (at most 1 s), as after a failover until the former primary is back as a replica, the reports are answered anyway and it is logged; the wait is then skipped for 10 s at a time.",
    }),
  ),
  RATE_LIMIT_TIMEOUT_MS: Integer({
    default: 250,
    maximum: 5000,
    description: 'Time a rate-limit or failed-authentication counter in Redis may take; past it (Redis stalled or away) the request goes on unlimited.',
  }),
  REDIS_COMMAND_TIMEOUT_MS: Integer({
    default: 2000,
    minimum: 100,
    maximum: 60000,
    description:
      "Time a Redis command of a request may take (enqueueing a send, a device report). A send that cannot enqueue in time is still accepted: its messages are stored, and the dispatchers' outbox sweep enqueues them.",
  }),
  REQUEST_TIMEOUT_SECONDS: Integer({
    default: 60,
    maximum: 3600,
    description:
      'Time a client has to send a whole request, headers and body; past it the API answers 408 and closes the connection. It ends once the request has arrived, so long polls and event streams are not cut by it.',
  }),
  TRUST_PROXY: Type.Optional(
    Type.String({
      pattern: '^(true|false|[0-9A-Fa-f.:/]+(,[0-9A-Fa-f.:/]+)*)$',
      description:
        'Behind a reverse proxy: the proxy addresses (comma-separated IPs or CIDRs), or true for any; the client address is then read from X-Forwarded-For.',
    }),
  ),
  PHONE_DEFAULT_REGION: Type.Optional(
    Type.String({
      pattern: '^[A-Z]{2}$',
      description:
        'The country (ISO 3166 code, e.g. DE) whose numbering a number without + is read in, on the SMS Gate client API (/3rdparty/v1); unset: such numbers are refused.',
    }),
  ),
});

export const DeviceProtocolEnv = Type.Object({
  PUBLIC_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^/?#]+(/[^?#]*)?$',
      description: 'Base URL that phones use to reach the API (https://… in any real deployment); default http://HOST:PORT.',
    }),
  ),
  PAIRING_TTL_SECONDS: Integer({ default: 600, maximum: 86400, description: 'Lifetime of a device pairing code and token.' }),
});

/** TRUST_PROXY as Fastify's `trustProxy` option. */
export function trustProxy(config: { TRUST_PROXY?: string }): boolean | string[] {
  const value = config.TRUST_PROXY;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return value.split(',');
}

/** PUBLIC_URL without a trailing slash, or http://HOST:PORT. */
export function publicUrl(config: { PUBLIC_URL?: string; HOST: string; PORT: number }): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`;
}

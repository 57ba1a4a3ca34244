import { Type, type Static, type TObject } from 'typebox';
import { Value } from 'typebox/value';
import { DEVICE_PROTOCOL_SLUGS } from '@smsgw/core/device-protocols';
import { convertText } from './convert.ts';

/**
 * The environment of every smsgw process, in one place. Each process reads the parts it needs with
 * `loadConfig`, once at start, and fails fast with a message naming the variable that is wrong.
 */
const Integer = (options: { default: number; minimum?: number; maximum?: number; description: string }) => Type.Integer({ minimum: 1, ...options });

export const DatabaseEnv = Type.Object({
  DATABASE_URL: Type.String({
    default: 'postgresql://postgres@127.0.0.1:5432/smsgw',
    pattern: '^postgres(ql)?://',
    description: 'Postgres connection URL.',
  }),
});

/**
 * Where what needs a session of its own goes when DATABASE_URL is a transaction pooler (PgBouncer):
 * docs/operations.md, "Postgres behind a transaction pooler".
 */
export const DirectDatabaseEnv = Type.Object({
  DATABASE_DIRECT_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        "Postgres connection URL straight to Postgres (not through a transaction pooler such as PgBouncer), for what needs a session of its own: migrations, the API's LISTEN for credential changes and its listings' pool. Unset: DATABASE_URL serves those too, and the API refuses to start when DATABASE_URL is a connection pooler.",
    }),
  ),
});

// host:port, comma-separated; an IPv6 address in brackets ([::1]:6379).
const HOST_PORTS = '^(\\[[0-9A-Fa-f:.]+\\]|[^,:\\s\\[\\]]+):\\d{1,5}(,(\\[[0-9A-Fa-f:.]+\\]|[^,:\\s\\[\\]]+):\\d{1,5})*$';

/**
 * Where Redis is: one server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES) or a primary found
 * through Sentinel (REDIS_SENTINELS); docs/operations.md, "Redis Cluster and Sentinel".
 */
export const RedisEnv = Type.Object({
  REDIS_URL: Type.String({
    default: 'redis://127.0.0.1:6379',
    pattern: '^rediss?://',
    description: 'Redis connection URL, of a single Redis server. Ignored when REDIS_CLUSTER_NODES or REDIS_SENTINELS is set.',
  }),
  REDIS_CLUSTER_NODES: Type.Optional(
    Type.String({
      pattern: HOST_PORTS,
      description:
        'A Redis Cluster instead: some of its nodes as host:port, comma-separated (the others are discovered). Every key then carries the hash tag of QUEUE_PREFIX ({smsgw}), so all of them are in one slot: the cluster gives failover, not sharding.',
    }),
  ),
  REDIS_SENTINELS: Type.Optional(
    Type.String({
      pattern: HOST_PORTS,
      description: 'Redis behind Sentinel instead: the Sentinels as host:port, comma-separated; the primary is the one they name REDIS_SENTINEL_NAME.',
    }),
  ),
  REDIS_SENTINEL_NAME: Type.String({
    default: 'mymaster',
    pattern: '^[A-Za-z0-9_.:-]+$',
    description: 'With REDIS_SENTINELS: the name under which the Sentinels monitor the primary (`sentinel monitor <name> …`).',
  }),
  REDIS_USERNAME: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'The Redis ACL user (AUTH <user> <password>) of the cluster nodes, or of the primary and replicas the Sentinels name; with REDIS_URL, for a URL that names none. Unset: the default user.',
    }),
  ),
  REDIS_PASSWORD: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "The password of the cluster nodes, or of the primary and replicas the Sentinels name (their requirepass, or REDIS_USERNAME's); with REDIS_URL, for a URL that carries none.",
    }),
  ),
  REDIS_TLS: Type.Boolean({
    default: false,
    description:
      "TLS on every connection to Redis: the cluster nodes, or the Sentinels and the primary they name (with REDIS_URL, as rediss:// does). The servers' certificates are checked against the system CAs and NODE_EXTRA_CA_CERTS.",
  }),
  REDIS_SENTINEL_USERNAME: Type.Optional(Type.String({ minLength: 1, description: "With REDIS_SENTINELS: the Sentinels' own ACL user, when they have one." })),
  REDIS_SENTINEL_PASSWORD: Type.Optional(
    Type.String({
      minLength: 1,
      description: "With REDIS_SENTINELS: the Sentinels' own password (their requirepass), which is not the data nodes' REDIS_PASSWORD.",
    }),
  ),
  QUEUE_PREFIX: Type.String({
    default: 'smsgw',
    pattern: '^[A-Za-z0-9_.:{}-]+$',
    description:
      "Prefix of every key and channel of smsgw in Redis (BullMQ's included); processes sharing one queue use the same prefix. On a Redis Cluster it is used as a hash tag, {smsgw}, unless it has one already.",
  }),
});

export const LogEnv = Type.Object({
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
  }),
  LOG_FORMAT: Type.Enum(['auto', 'json', 'pretty'], {
    default: 'auto',
    description:
      'json: one JSON object a line (for log collectors); pretty: one readable line per entry; auto: pretty when standard output is a terminal, else json.',
  }),
});

/**
 * The long-running services' memory: V8 lets a busy process's heap grow to several times what it
 * holds before it collects (a 45 MB live heap showed as 200-270 MB resident under bench:e2e).
 */
export const MemoryEnv = Type.Object({
  HEAP_GROWTH_PERCENT: Integer({
    default: 25,
    minimum: 0,
    maximum: 300,
    description:
      "How far (percent) the API or dispatcher lets its heap grow beyond what it held after a full collection before collecting again; lower keeps memory down at some CPU. 0: V8's own choice (up to 4 times).",
  }),
});

export const SendingEnv = Type.Object({
  MONTHLY_QUOTA_DEFAULT: Integer({
    default: 10000,
    minimum: 0,
    description: 'Messages a user may send per calendar month (UTC) unless the user has a limit of their own.',
  }),
  MAX_RECIPIENTS: Integer({ default: 10000, maximum: 100000, description: 'Most recipients of one send request, after group expansion.' }),
});

/**
 * When a device counts as available, and how long a message handed to a device may stay there
 * (docs/devices.md, "Availability" and "Delivery"). Read by the API and the dispatchers alike.
 */
export const DeviceEnv = Type.Object({
  DEVICE_AVAILABLE_SECONDS: Integer({
    default: 1200,
    description:
      'A device that holds no event stream is available when it made a request within this many seconds (SMS Gate phones without "SSE only" poll every 15 minutes).',
  }),
  DEVICE_HEARTBEAT_SECONDS: Integer({
    default: 15,
    maximum: 300,
    description: "Seconds between keepalives on a device event stream; the stream refreshes the device's availability as often.",
  }),
  DEVICE_STREAM_GRACE_SECONDS: Integer({
    default: 30,
    maximum: 3600,
    description:
      'A device stays available this long after its event stream closed (at least DEVICE_HEARTBEAT_SECONDS, so that a stream it holds on another API process refreshes it in time).',
  }),
  SENDING_LEASE_SECONDS: Integer({
    default: 3600,
    description:
      'A message handed to a device must be sent within this time from the first offer (the phone gets it as validUntil); past it, and the clock skew, it fails unless reported sent. It is never re-sent.',
  }),
  DEVICE_CLOCK_SKEW_SECONDS: Integer({
    default: 300,
    minimum: 0,
    maximum: 3600,
    description: "How long after validUntil smsgw waits for a phone's own report before failing the message (phone clocks drift).",
  }),
  MESSAGE_TTL_SECONDS: Integer({
    default: 86400,
    description: 'A message not handed to a device within this time fails as expired; it is also the latest validUntil.',
  }),
  MAX_QUEUE_SECONDS: Integer({
    default: 36000,
    description:
      'A message not handed to a device within this time from its creation (or its send_at) fails "expired before it could be sent"; a message\'s own valid_until or ttl_seconds replaces it. 10 hours, as Twilio\'s queue.',
  }),
  DEVICE_OFFLINE_AFTER_SECONDS: Integer({
    default: 120,
    minimum: 10,
    maximum: 86400,
    description:
      'A device that gave no sign of life (request, event stream, heartbeat, ping) for this long is announced offline (device.offline webhook); SMS Gate phones are told to ping every half of it.',
  }),
});

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

export const DispatcherEnv = Type.Object({
  DISPATCH_CONCURRENCY: Integer({ default: 256, maximum: 5000, description: 'Dispatch jobs a dispatcher works on at once (they are assigned in batches).' }),
  DISPATCH_BATCH_SIZE: Integer({ default: 500, maximum: 5000, description: 'Most messages assigned in one statement.' }),
  ASSIGN_LEASE_SECONDS: Integer({
    default: 60,
    description: 'An assigned message that its device did not take (claim or pull) within this time goes to another device.',
  }),
  MAX_ASSIGNMENTS: Integer({ default: 3, maximum: 100, description: 'Assignments of one message before it fails.' }),
  MAX_SEND_ATTEMPTS: Integer({
    default: 3,
    maximum: 10,
    description:
      "Devices a round-robin message may be tried on when each fails it before it leaves (a retryable failure); then it fails with every attempt's error.",
  }),
  QUARANTINE_AFTER_FAILURES: Integer({
    default: 5,
    maximum: 1000,
    description:
      'Retryable failures in a row (no message sent between) after which a device leaves round-robin for a cool-down of 1 minute, doubling with each further quarantine up to 1 hour.',
  }),
  LIMIT_EXCEEDED_PAUSE_SECONDS: Integer({
    default: 300,
    maximum: 86400,
    description: "A device that reports Android's sending limit (RESULT_ERROR_LIMIT_EXCEEDED) leaves round-robin for this long.",
  }),
  SWEEP_INTERVAL_SECONDS: Integer({ default: 5, maximum: 3600, description: 'How often leases, expiry and the outbox are checked.' }),
  MESSAGE_RETENTION_DAYS: Integer({
    default: 0,
    minimum: 0,
    maximum: 36500,
    description:
      'Days a delivered or failed message (with its history) is kept after its last change; the sweep then deletes it, and its batch once empty. 0: kept for ever. Quota counts are kept apart and stay right.',
  }),
  MESSAGE_EVENT_RETENTION_DAYS: Integer({
    default: 0,
    minimum: 0,
    maximum: 36500,
    description: "Days a message's state history (its events) is kept, for messages that are themselves kept longer. 0: as long as the message.",
  }),
  RECEIVED_SMS_RETENTION_DAYS: Integer({
    default: 0,
    minimum: 0,
    maximum: 36500,
    description: 'Days an incoming SMS is kept; the sweep then deletes it. 0: kept for ever.',
  }),
  OUTBOX_AGE_SECONDS: Integer({ default: 30, description: 'A pending message older than this is enqueued again if its job was lost.' }),
  WORKER_LOCK_SECONDS: Integer({
    default: 30,
    maximum: 600,
    description: 'Job lock; the jobs of a dispatcher that died are taken over after about this time.',
  }),
  METRICS_PORT: Integer({ default: 0, minimum: 0, maximum: 65535, description: 'Port of the dispatcher’s Prometheus /metrics, on METRICS_HOST (0: off).' }),
  METRICS_HOST: Type.String({ default: '127.0.0.1', description: 'Address of the dispatcher’s /metrics (0.0.0.0 in containers).' }),
});

export const WebhookEnv = Type.Object({
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({
    default: false,
    description: 'Allow webhook URLs that resolve to loopback, private, link-local or other internal addresses (tests, closed networks).',
  }),
  WEBHOOK_CONNECT_TIMEOUT_MS: Integer({ default: 5000, maximum: 60000, description: 'Time allowed to resolve and connect to a webhook endpoint.' }),
  WEBHOOK_TIMEOUT_MS: Integer({ default: 15000, maximum: 120000, description: 'Time allowed for a whole webhook request, response included.' }),
  WEBHOOK_RETRY_DELAYS: Type.String({
    // The Standard Webhooks reference schedule: eight attempts over about a day.
    default: '5,300,1800,7200,18000,36000,36000',
    pattern: '^\\d+(\\.\\d+)?(,\\d+(\\.\\d+)?)*$',
    description: 'Seconds to wait before each retry of a failed webhook delivery, comma-separated (jittered by up to a fifth).',
  }),
  WEBHOOK_CONCURRENCY: Integer({ default: 64, maximum: 1000, description: 'Webhook requests a dispatcher makes at once.' }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Integer({ default: 8, maximum: 100, description: 'Requests to one webhook endpoint at once, across every dispatcher.' }),
  WEBHOOK_PARKED_RECHECK_SECONDS: Integer({
    default: 300,
    maximum: 86400,
    description:
      'A delivery parked behind a busy endpoint counts as overdue for the outbox sweep after this long (normally a slot holder takes it long before).',
  }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: Integer({ default: 30, maximum: 3650, description: 'Days a finished webhook delivery stays in the delivery log.' }),
});

/** WEBHOOK_RETRY_DELAYS as numbers of seconds. */
export function webhookRetryDelays(config: { WEBHOOK_RETRY_DELAYS: string }): number[] {
  return config.WEBHOOK_RETRY_DELAYS.split(',').map(Number);
}

export const ApiConfigSchema = Type.Evaluate(
  Type.Intersect([DatabaseEnv, DirectDatabaseEnv, RedisEnv, LogEnv, MemoryEnv, SendingEnv, DeviceEnv, ApiEnv, DeviceProtocolEnv, WebhookEnv]),
);
export type ApiConfig = Static<typeof ApiConfigSchema>;

export const DispatcherConfigSchema = Type.Evaluate(
  Type.Intersect([DatabaseEnv, RedisEnv, LogEnv, MemoryEnv, SendingEnv, DeviceEnv, DispatcherEnv, WebhookEnv]),
);
export type DispatcherConfig = Static<typeof DispatcherConfigSchema>;

export const DeviceSimConfigSchema = Type.Object({
  SMSGW_URL: Type.String({ default: 'http://127.0.0.1:3000', pattern: '^https?://', description: 'Base URL of the smsgw API.' }),
  SIM_PROTOCOL: Type.Enum(DEVICE_PROTOCOL_SLUGS, {
    default: 'native',
    description: "native: smsgw's device protocol (DEVICE_TOKEN); sms-gate: the SMS Gate app's mobile API (SIM_PAIRING, SIM_STATE_DIR).",
  }),
  DEVICE_TOKEN: Type.Optional(
    Type.String({
      pattern: '^smsgw_dt_[^,]+(,smsgw_dt_[^,]+)*$',
      description: 'Device token from device registration, or several separated by commas (one simulated phone each). Required for native.',
    }),
  ),
  SIM_PAIRING: Type.Optional(
    Type.String({
      pattern: '^([0-9]+|smsgw_pt_[^,]+)(,([0-9]+|smsgw_pt_[^,]+))*$',
      description: 'sms-gate: a pairing code or pairing token, or several separated by commas (one simulated phone each).',
    }),
  ),
  SIM_STATE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'sms-gate: where phone n keeps its registration (<n>.json), so that a restarted simulator does not register again.',
    }),
  ),
  SIM_MOBILE_URL: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'sms-gate: the server URL as typed into the app; default SMSGW_URL + /mobile/v1.' }),
  ),
  SIM_APP_VERSION: Type.String({
    default: '1.68.0',
    pattern: '^\\d+\\.\\d+\\.\\d+$',
    description: 'sms-gate: the app version the phones claim in their User-Agent.',
  }),
  SIM_TZ_OFFSET: Type.String({ default: '+03:00', pattern: '^[+-]\\d{2}:\\d{2}$', description: "sms-gate: the phones' local offset in the dates they send." }),
  SIM_SEND_MS: Type.Integer({ default: 50, minimum: 0, description: 'Simulated time to send one message.' }),
  SIM_DELIVER_MS: Type.Integer({ default: 200, minimum: 0, description: 'Simulated time from sent to the delivery report.' }),
  SIM_FAILURE_RATE: Type.Number({ default: 0, minimum: 0, maximum: 1, description: 'Share of messages that fail to send.' }),
  SIM_RETRYABLE_FAILURE_RATE: Type.Number({
    default: 0,
    minimum: 0,
    maximum: 1,
    description: 'Share of messages that fail before they leave the phone (native: `retryable: true`; sms-gate: RESULT_ERROR_NO_SERVICE), for failover tests.',
  }),
  SIM_POLL_SECONDS: Type.Integer({ default: 10, minimum: 1, description: 'Safety-net poll (sms-gate: pull) interval besides the event stream.' }),
  SIM_CLAIM_LIMIT: Type.Integer({ default: 100, minimum: 1, maximum: 500, description: 'native: messages claimed per request.' }),
  SIM_RECONNECT_MS: Type.Integer({
    default: 5000,
    minimum: 1,
    description: "sms-gate: event stream reconnect delay of attempts 1-5 (the app's 5 s); 6-10 wait 6 times as long, later ones 12 times.",
  }),
  SIM_RETRY_MS: Type.Integer({ default: 10000, minimum: 1, description: "sms-gate: first retry delay of a failed call (the app's 10 s), doubling." }),
  SIM_WEBHOOK_RETRY_MS: Type.Integer({
    default: 5000,
    minimum: 1,
    description: "sms-gate: first retry delay of a refused webhook post (the app's 5 s), doubling, 15 retries.",
  }),
  SIM_INBOUND_EVERY_MS: Type.Integer({
    default: 0,
    minimum: 0,
    description: "sms-gate: post a fake incoming SMS to the phone's webhook this often (0: never).",
  }),
  SIM_START_SPREAD_MS: Type.Integer({
    default: 0,
    minimum: 0,
    description: 'sms-gate: start the phones one after the other over this many ms rather than all at once (a fleet does not boot in one second).',
  }),
  SIM_LOG_FILE: Type.Optional(Type.String({ description: 'Append one JSON line per message sent (for tests).' })),
  SIM_PATCH_TIMES_FILE: Type.Optional(
    Type.String({ description: 'sms-gate: append the milliseconds each `PATCH /message` took as the phone saw it, one line each (for the benchmark).' }),
  ),
  LOG_LEVEL: LogEnv.properties.LOG_LEVEL,
  LOG_FORMAT: LogEnv.properties.LOG_FORMAT,
});
export type DeviceSimConfig = Static<typeof DeviceSimConfigSchema>;

/** The USB modem agent (docs/devices.md, "USB modems"): one process per modem. */
export const ModemAgentConfigSchema = Type.Object({
  MODEM_PORT: Type.String({ minLength: 1, description: "Serial port of the modem's AT interface, e.g. /dev/ttyUSB2 or /dev/serial/by-id/…. Required." }),
  MODEM_BAUD: Type.Integer({ default: 115200, minimum: 300, maximum: 4000000, description: 'Baud rate of the serial port.' }),
  MODEM_PIN: Type.Optional(Type.String({ pattern: '^[0-9]{4,8}$', description: 'SIM PIN, entered when the SIM asks for it.' })),
  SMSGW_URL: Type.String({ pattern: '^https?://', description: 'Base URL of the smsgw API. Required.' }),
  SMSGW_DEVICE_TOKEN: Type.String({ pattern: '^smsgw_dt_', description: "The modem's device token (POST /api/v1/devices). Required." }),
  MODEM_STATE_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Where the agent remembers what it submitted, so that a restart never sends a message twice; default modem-<port name>.state.json in the working directory.',
    }),
  ),
  MODEM_COMMAND_TIMEOUT_MS: Type.Integer({
    default: 10000,
    minimum: 100,
    description: 'Longest wait for the answer to an AT command; past it the modem is opened and initialised again.',
  }),
  MODEM_SEND_TIMEOUT_MS: Type.Integer({ default: 60000, minimum: 100, description: 'Longest wait for +CMGS after a PDU (the network may be slow).' }),
  MODEM_POLL_SECONDS: Type.Integer({
    default: 30,
    minimum: 1,
    description: 'How often the agent claims without a wake-up, retries forwarding incoming SMS and checks that the modem answers.',
  }),
  MODEM_RETRY_MAX_MS: Type.Integer({
    default: 10000,
    minimum: 100,
    description: 'Longest pause between attempts to reopen the port or reach smsgw (the pause doubles from 250 ms).',
  }),
  LOG_LEVEL: LogEnv.properties.LOG_LEVEL,
  LOG_FORMAT: LogEnv.properties.LOG_FORMAT,
});
export type ModemAgentConfig = Static<typeof ModemAgentConfigSchema>;

/**
 * The operator CLI (`smsgw`): the database, and Redis for the commands that enqueue (`message send`,
 * `webhook test`) under the same QUEUE_PREFIX and command timeout as the API; HOST and PORT make the
 * default PUBLIC_URL of a pairing.
 */
export const CliConfigSchema = Type.Evaluate(
  Type.Intersect([DatabaseEnv, RedisEnv, LogEnv, SendingEnv, DeviceEnv, Type.Pick(ApiEnv, ['HOST', 'PORT', 'REDIS_COMMAND_TIMEOUT_MS']), DeviceProtocolEnv]),
);
export type CliConfig = Static<typeof CliConfigSchema>;

/** The migrator (`./pnpmw db:migrate`, the compose `migrate` service): on DATABASE_DIRECT_URL when set. */
export const MigrateConfigSchema = Type.Evaluate(Type.Intersect([DatabaseEnv, DirectDatabaseEnv]));
export type MigrateConfig = Static<typeof MigrateConfigSchema>;

/** Settings that the API and the dispatchers must agree on; each checks the others' at start (packages/queue, process-settings). */
export const SHARED_SETTINGS = [...Object.keys(SendingEnv.properties), ...Object.keys(DeviceEnv.properties), 'WEBHOOK_ALLOW_PRIVATE'] as const;

/** The values of SHARED_SETTINGS in `config`. */
export function sharedSettings(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SHARED_SETTINGS.map((name) => [name, config[name]]));
}

/** A wrong environment: one line per variable (`problems`), each naming it and the fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';

  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** Reads the variables of `schema` from `env`, applies defaults, converts numbers, and checks them. */
export function loadConfig<T extends TObject>(schema: T, env: Record<string, string | undefined> = process.env): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const value = convertText(schema, Value.Default(schema, raw));
  const errors = Value.Errors(schema, value);
  if (errors.length > 0) {
    const names = errors.flatMap((error) => (error.keyword === 'required' ? requiredNames(error) : [error.instancePath.replace(/^\//, '').split('/')[0]!]));
    throw new ConfigError([...new Set(names)].map((name) => problem(name, schema.properties[name] as Variable | undefined, name in raw)));
  }
  return value as Static<T>;
}

function requiredNames(error: { params: object }): string[] {
  return (error.params as { requiredProperties?: string[] }).requiredProperties ?? [];
}

interface Variable {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  default?: unknown;
  description?: string;
}

/** What a variable must be, in words: "a whole number from 0 to 65535", "one of json, pretty". */
export function expectation(variable: Variable): string {
  if (variable.type === 'integer' || variable.type === 'number') {
    const { minimum: min, maximum: max } = variable;
    const range =
      min !== undefined && max !== undefined
        ? ` from ${min} to ${max}`
        : min !== undefined
          ? ` of ${min} or more`
          : max !== undefined
            ? ` of at most ${max}`
            : '';
    return `${variable.type === 'integer' ? 'a whole number' : 'a number'}${range}`;
  }
  if (variable.type === 'boolean') return 'true or false';
  if (Array.isArray(variable.enum)) return `one of ${variable.enum.join(', ')}`;
  const rules = [
    ...(variable.minLength !== undefined ? [`of at least ${variable.minLength} characters`] : []),
    ...(variable.pattern !== undefined ? [`matching ${variable.pattern}`] : []),
  ];
  return ['text', ...rules].join(' ');
}

/** The one line that names a wrong or missing variable and the fix (issue 24: a start-up error is one line, never a stack). */
function problem(name: string, variable: Variable | undefined, given: boolean): string {
  const what = variable ? expectation(variable) : 'a valid value';
  const about = variable?.description ? ` ${variable.description}` : '';
  if (!given) return `${name} is not set: set it to ${what}.${about}`;
  const fallback = variable?.default !== undefined ? `, or unset it for the default (${String(variable.default)})` : '';
  return `Invalid ${name}: set it to ${what}${fallback}.${about}`;
}

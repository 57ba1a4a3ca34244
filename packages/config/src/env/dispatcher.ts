import { Type } from 'typebox';
import { Integer } from './integer.ts';

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

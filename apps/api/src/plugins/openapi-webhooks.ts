import { Type, type TSchema } from 'typebox';
import { DEVICE_EVENT_TYPES, MESSAGE_EVENT_TYPES, RECEIVED_EVENT_TYPE, TEST_EVENT_TYPE, type WebhookEventType } from '@smsgw/core';
import { DeviceRecord } from '../schemas/device-record.ts';
import { Message, ReceivedSms } from '../schemas/records.ts';
import { referenceNamed } from './openapi-components.ts';

/**
 * The document's `webhooks` (OpenAPI 3.1): one entry per event type smsgw posts to a user's
 * endpoints (packages/core/src/webhook-event.ts), with its payload and the Standard Webhooks headers.
 */

type Json = Record<string, unknown>;

const WebhookTestData = Type.Object(
  { webhook_id: Type.String({ format: 'uuid' }), message: Type.String() },
  { $id: 'WebhookTestData', description: 'What a webhook.test event carries.' },
);

const SUMMARIES = {
  'message.sent': ['A message left the device', Message],
  'message.delivered': ['A message was delivered to its recipient', Message],
  'message.failed': ['A message failed: its error says why', Message],
  'message.cancelled': ['A message was cancelled before any device sent it; its quota unit was given back', Message],
  [RECEIVED_EVENT_TYPE]: ['One of your devices received an SMS', ReceivedSms],
  'device.offline': ['A device gave no sign of life for DEVICE_OFFLINE_AFTER_SECONDS', DeviceRecord],
  'device.online': ['A device is online again (after offline or degraded)', DeviceRecord],
  'device.degraded': ['A device is online but degraded: its health.reasons say why', DeviceRecord],
  [TEST_EVENT_TYPE]: ['A test event, sent by POST /api/v1/webhooks/{id}/test', WebhookTestData],
} as const satisfies Record<WebhookEventType, readonly [string, TSchema]>;

const EVENT_TYPES: WebhookEventType[] = [...MESSAGE_EVENT_TYPES, RECEIVED_EVENT_TYPE, ...DEVICE_EVENT_TYPES, TEST_EVENT_TYPE];

const HEADERS = [
  ['webhook-id', 'The delivery id: the same on every attempt of one event, to drop repeats.', '0195f4c2-9b0a-7e1c-8d2f-3a4b5c6d7e8f'],
  ['webhook-timestamp', 'Seconds since the epoch when the attempt was signed: refuse one too far from your clock.', '1772357401'],
  [
    'webhook-signature',
    'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret while a rotated secret is still valid; the key is the base64 part of the endpoint\'s whsec_ secret.',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ],
] as const;

/** `message.delivered` -> `MessageDeliveredEvent`. */
export function eventSchemaName(type: string): string {
  return `${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}Event`;
}

function example(type: WebhookEventType, data: TSchema): Json {
  const sample = (data as { examples?: unknown[] }).examples?.[0] ?? {
    webhook_id: '0195f4c4-1a2b-7c3d-8e4f-5a6b7c8d9e0f',
    message: 'This is a test event from smsgw.',
  };
  const status = ({ 'message.sent': 'sent', 'message.failed': 'failed', 'message.cancelled': 'cancelled' } as Record<string, string>)[type];
  const unsent = status === 'failed' || status === 'cancelled';
  const payload = status
    ? {
        ...(sample as Json),
        status,
        state: status,
        delivered_at: null,
        ...(unsent && { sent_at: null }),
        ...(status === 'failed' && { error: 'RESULT_ERROR_GENERIC_FAILURE' }),
      }
    : sample;
  return { type, timestamp: '2026-03-01T09:30:04.210Z', data: payload };
}

function operation(type: WebhookEventType, components: Json): Json {
  const [summary, data] = SUMMARIES[type];
  const payload = Type.Object(
    { type: Type.Literal(type), timestamp: Type.String({ format: 'date-time', description: 'When it happened.' }), data },
    { $id: eventSchemaName(type), description: `The body of a ${type} event.` },
  );
  return {
    post: {
      operationId: `webhook${eventSchemaName(type).replace(/Event$/, '')}`,
      summary,
      description: `Posted to every enabled endpoint subscribed to ${type}${type === TEST_EVENT_TYPE ? ' (the endpoint it was sent to only)' : ''}. Verify the signature before trusting the body (docs/http-api.md).`,
      tags: ['webhooks'],
      security: [],
      parameters: HEADERS.map(([name, description, value]) => ({
        name,
        in: 'header',
        required: true,
        description,
        schema: { type: 'string' },
        example: value,
      })),
      requestBody: { required: true, content: { 'application/json': { schema: referenceNamed(payload, components), example: example(type, data) } } },
      responses: {
        '200': { description: 'Any 2xx: received. Any other answer, or none within WEBHOOK_TIMEOUT_MS, is retried on the WEBHOOK_RETRY_DELAYS schedule.' },
        '410': { description: 'Gone: smsgw disables the endpoint (its disabled_reason says so) and sends it nothing more until it is enabled again.' },
      },
    },
  };
}

/** The `webhooks` section; the payloads' schemas are added to `components`. */
export function webhooksSection(components: Json): Json {
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, operation(type, components)]));
}

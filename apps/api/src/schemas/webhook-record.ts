import { Type } from 'typebox';
import { SUBSCRIBABLE_EVENT_TYPES } from '@smsgw/core';
import type { WebhookDeliveryRow, WebhookRow } from '@smsgw/db';
import { NullableTimestamp, Timestamp } from './common.ts';

/** The webhook endpoint and delivery records of `/api/v1/webhooks`, and their fields in requests. */
export const Url = Type.String({ minLength: 1, description: 'http(s), at most 2000 characters, whose host resolves only to public addresses.' });
export const Events = Type.Array(Type.Enum([...SUBSCRIBABLE_EVENT_TYPES]), {
  minItems: 1,
  uniqueItems: true,
  description: 'Event types the endpoint receives.',
});
export const Description = Type.String({ maxLength: 500 });
export const Secret = Type.String({ description: 'whsec_ + base64 key: verifies the webhook-signature header (Standard Webhooks).' });

export const WebhookRecord = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Events,
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why smsgw disabled the endpoint (410 Gone); null otherwise.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Webhook', description: 'An endpoint that receives signed events (Standard Webhooks).' },
);

export const DeliveryRecord = Type.Object(
  {
    id: Type.String({ description: 'The webhook-id header of every attempt.' }),
    type: Type.String(),
    message_id: Type.Union([Type.String(), Type.Null()]),
    state: Type.Enum(['pending', 'succeeded', 'failed']),
    attempts: Type.Integer(),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    last_attempt_at: NullableTimestamp,
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'Set exactly while the delivery is pending.' }),
    created_at: Timestamp,
  },
  { $id: 'WebhookDelivery', description: 'One event for one endpoint, and how its attempts went.' },
);

export const DeliveryParams = Type.Object({ id: Type.String(), deliveryId: Type.String() }, { additionalProperties: false });

export function toRecord(w: WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events as (typeof SUBSCRIBABLE_EVENT_TYPES)[number][],
    description: w.description,
    enabled: w.enabled,
    disabled_reason: w.disabledReason,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

export function toDeliveryRecord(d: WebhookDeliveryRow) {
  return {
    id: d.id,
    type: d.type,
    message_id: d.messageId,
    state: d.state,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    last_attempt_at: d.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
  };
}

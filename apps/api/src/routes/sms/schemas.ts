import { Type } from 'typebox';
import { MAX_BODY_CODE_POINTS, STATUS_FILTER_VALUES } from '@smsgw/core';
import { CursorPageOf, CursorPagination } from '../../schemas/common.ts';
import { Message } from '../../schemas/records.ts';

const Recipients = Type.Array(Type.String(), {
  description: 'Phone numbers in E.164 format (`^\\+[1-9]\\d{1,14}$`). May be empty when group_ids bring members.',
});
const GroupIds = Type.Array(Type.String(), { description: 'Contact groups whose members are added to the recipients.' });
const DeviceId = Type.String({ description: 'Send through this device; by default a device is chosen by round-robin.' });

/** When and how the messages of a send go out (decisions.md, "Scheduled sends and validity"; "SIM choice"). */
const Delivery = {
  send_at: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Hold the messages until this moment (ISO 8601 with an offset, e.g. `2026-12-01T09:00:00+01:00`): in the future, at most 366 days ahead. Quota is charged at once.',
    }),
  ),
  valid_until: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'A message no device took by this moment (ISO 8601 with an offset; after send_at) fails with "expired before it could be sent". Not with ttl_seconds.',
    }),
  ),
  ttl_seconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'valid_until as seconds from send_at (or from acceptance): 1 to MESSAGE_TTL_SECONDS. Not with valid_until.',
    }),
  ),
  sim_number: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 3, description: 'The SIM slot of the device to send from, 1 to 3; by default the device’s own choice.' }),
  ),
};

export const SendBody = Type.Object(
  {
    recipients: Recipients,
    body: Type.String({ minLength: 1, maxLength: MAX_BODY_CODE_POINTS, description: 'Message text, 1 to 1600 Unicode code points.' }),
    device_id: Type.Optional(DeviceId),
    group_ids: Type.Optional(GroupIds),
    ...Delivery,
  },
  // The docs' "Try it out" starts from this: a request that is accepted as it stands.
  { additionalProperties: false, $id: 'SendRequest', description: 'A text to send.', examples: [{ recipients: ['+15551234567'], body: 'Hello from smsgw' }] },
);

export const SendTemplateBody = Type.Object(
  {
    recipients: Recipients,
    template_id: Type.String({ description: 'A template of the caller.' }),
    variables: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Custom variables of the template; `name` is the fallback for recipients who are no contact.' }),
    ),
    device_id: Type.Optional(DeviceId),
    group_ids: Type.Optional(GroupIds),
    ...Delivery,
  },
  {
    additionalProperties: false,
    $id: 'SendTemplateRequest',
    description: 'A template to render per recipient and send.',
    examples: [{ recipients: ['+15551234567'], template_id: '0195f4c1-5e6f-7a8b-9c0d-1e2f3a4b5c6d', variables: { code: '123456' } }],
  },
);

export const SendResponse = Type.Object(
  {
    message_ids: Type.Array(Type.String()),
    recipients_count: Type.Integer(),
    status: Type.Literal('accepted'),
    batch_id: Type.Optional(Type.String({ description: 'Present only when there is more than one recipient.' })),
    opted_out: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Present only when some recipients are on the opt-out list: their messages are stored failed ("recipient opted out"), never sent and not charged.',
      }),
    ),
  },
  {
    $id: 'SendAccepted',
    description: 'Accepted: one message per recipient, queued for a device (those to opted-out recipients failed at once).',
    examples: [{ message_ids: ['0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10'], recipients_count: 1, status: 'accepted' }],
  },
);

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays the first response for 24 hours.' })),
});

export const ListQuery = Type.Object({
  status: Type.Optional(Type.Enum(STATUS_FILTER_VALUES, { description: 'queued matches pending and assigned; cancelled matches cancelled messages.' })),
  to: Type.Optional(Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'Exact recipient number, E.164 (send the + as %2B in a query string).' })),
  batch_id: Type.Optional(Type.String({ format: 'uuid' })),
  device_id: Type.Optional(Type.String({ format: 'uuid' })),
  ...CursorPagination.properties,
});

export const MessageList = CursorPageOf(Message, 'MessagePage');

export const BatchParams = Type.Object({ batch_id: Type.String({ description: 'The batch_id of a send.' }) });

export const BatchCancelled = Type.Object(
  {
    batch_id: Type.String(),
    cancelled: Type.Integer({ description: 'Messages now cancelled (none of them reached a device).' }),
    cancelling: Type.Integer({ description: 'Messages an SMS Gate phone holds and was asked to cancel: cancelled once it answers.' }),
    not_cancelled: Type.Integer({ description: 'Messages already sending, sent or final, or held by a device that cannot cancel.' }),
    not_cancelled_ids: Type.Array(Type.String()),
  },
  {
    $id: 'BatchCancelled',
    description: 'What a batch cancel did, message by message.',
    examples: [
      {
        batch_id: '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c0b',
        cancelled: 8,
        cancelling: 1,
        not_cancelled: 1,
        not_cancelled_ids: ['0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10'],
      },
    ],
  },
);

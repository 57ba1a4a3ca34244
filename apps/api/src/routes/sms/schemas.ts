import { Type } from 'typebox';
import { MAX_BODY_CODE_POINTS, MessageRecordSchema, STATUS_FILTER_VALUES } from '@smsgw/core';
import { ErrorBody, Offset } from '../../schemas/common.ts';

const Recipients = Type.Array(Type.String(), {
  description: 'Phone numbers in E.164 format (`^\\+[1-9]\\d{1,14}$`). May be empty when group_ids bring members.',
});
const GroupIds = Type.Array(Type.String(), { description: 'Contact groups whose members are added to the recipients.' });
const DeviceId = Type.String({ description: 'Send through this device; by default a device is chosen by round-robin.' });

export const SendBody = Type.Object(
  {
    recipients: Recipients,
    body: Type.String({ minLength: 1, maxLength: MAX_BODY_CODE_POINTS, description: 'Message text, 1 to 1600 Unicode code points.' }),
    device_id: Type.Optional(DeviceId),
    group_ids: Type.Optional(GroupIds),
  },
  // The docs' "Try it out" starts from this: a request that is accepted as it stands.
  { additionalProperties: false, examples: [{ recipients: ['+15551234567'], body: 'Hello from smsgw' }] },
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
  },
  { additionalProperties: false },
);

/**
 * Send-template errors of spec section 7 have only `message`; the others `{error, message}`, in the
 * same key order as every other endpoint (an object with an optional `error` would be serialised
 * required-first, as `{message, error}`).
 */
export const SendTemplateErrorBody = Type.Union([ErrorBody, Type.Object({ message: Type.String() })]);

export const SendResponse = Type.Object({
  message_ids: Type.Array(Type.String()),
  recipients_count: Type.Integer(),
  status: Type.Literal('accepted'),
  batch_id: Type.Optional(Type.String({ description: 'Present only when there is more than one recipient.' })),
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays the first response for 24 hours.' })),
});

export const ListQuery = Type.Object({
  status: Type.Optional(Type.Enum(STATUS_FILTER_VALUES, { description: 'queued matches pending and assigned.' })),
  to: Type.Optional(
    Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'Exact recipient number, E.164 (send the + as %2B in a query string).' }),
  ),
  batch_id: Type.Optional(Type.String({ format: 'uuid' })),
  device_id: Type.Optional(Type.String({ format: 'uuid' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Offset,
});

export const MessageList = Type.Object({
  data: Type.Array(MessageRecordSchema),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

import { Type } from 'typebox';
import { MessageRecordSchema, ReceivedRecordSchema } from '@smsgw/core';

/**
 * The records of packages/core under their names in the OpenAPI document: the same properties,
 * validated and serialised as there, with a description and an example.
 */

export const Message = Type.Object(MessageRecordSchema.properties, {
  additionalProperties: false,
  $id: 'Message',
  description: 'A message to one recipient and its delivery status.',
  examples: [
    {
      id: '0195f4c2-7a1e-7c3b-9d2a-3f1e8b6a4c10',
      status: 'delivered',
      state: 'delivered',
      to: '+15551234567',
      message: 'Hello from smsgw',
      device_id: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01',
      batch_id: null,
      segments: 1,
      encoding: 'GSM-7',
      created_at: '2026-03-01T09:30:00.000Z',
      updated_at: '2026-03-01T09:30:04.210Z',
      sent_at: '2026-03-01T09:30:01.532Z',
      delivered_at: '2026-03-01T09:30:04.210Z',
      error: null,
      send_at: null,
      valid_until: null,
      sim_number: null,
    },
  ],
});

export const ReceivedSms = Type.Object(ReceivedRecordSchema.properties, {
  additionalProperties: false,
  $id: 'ReceivedSms',
  description: 'An SMS one of your devices received.',
  examples: [
    {
      id: '0195f4c3-2d4e-7f10-8a2b-1c3d4e5f6a70',
      from: '+15557654321',
      to: '+15551234567',
      message: 'STOP',
      device_id: '0195f4c0-1b2c-7d3e-8f4a-5b6c7d8e9f01',
      sim_number: 1,
      received_at: '2026-03-01T10:02:11.000Z',
      created_at: '2026-03-01T10:02:11.845Z',
    },
  ],
});

import { Type, type Static } from 'typebox';

/** The public record of an SMS a device received (real-devices.md §4), in the API and in `message.received` webhooks. */
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });

export const ReceivedRecordSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    from: Type.String({ description: 'Sender as the device saw it (usually E.164; may be a short code or a name).' }),
    to: Type.Union([Type.String(), Type.Null()], { description: 'The receiving SIM’s number; null when the device does not know it.' }),
    message: Type.String(),
    device_id: Type.String({ format: 'uuid' }),
    sim_number: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'The receiving SIM slot (1-based); null when unknown.' }),
    received_at: Timestamp,
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type ReceivedRecord = Static<typeof ReceivedRecordSchema>;

export interface ReceivedFields {
  id: string;
  deviceId: string;
  from: string;
  to: string | null;
  body: string;
  simNumber: number | null;
  receivedAt: Date;
  createdAt: Date;
}

export function toReceivedRecord(r: ReceivedFields): ReceivedRecord {
  return {
    id: r.id,
    from: r.from,
    to: r.to,
    message: r.body,
    device_id: r.deviceId,
    sim_number: r.simNumber,
    received_at: r.receivedAt.toISOString(),
    created_at: r.createdAt.toISOString(),
  };
}

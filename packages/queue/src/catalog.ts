import type { JobsOptions } from 'bullmq';
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

/**
 * The job catalog: every queue, its job names, their payload schemas and options, shared by the
 * producers (API) and the consumers (dispatcher). Payloads carry ids, never rows or secrets.
 * Never rename a queue or a job: add a `.v2` name instead.
 */
export const QUEUES = {
  dispatch: 'dispatch',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

const MessageId = Type.String({ format: 'uuid' });

export const JOBS = {
  /** Assign a device to a pending message and wake it. `jobId` is the message id. */
  'message.dispatch': {
    queue: QUEUES.dispatch,
    payload: Type.Object({ messageId: MessageId }, { additionalProperties: false }),
    options: {
      attempts: 8,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      removeOnFail: { age: 7 * 24 * 3600 },
    } satisfies JobsOptions,
  },
} as const satisfies Record<string, { queue: QueueName; payload: TSchema; options: JobsOptions }>;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]['payload']>;

export class InvalidJobPayloadError extends Error {
  override name = 'InvalidJobPayloadError';
}

/** Checks a payload against the catalog, at enqueue and at consume. */
export function parsePayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  const schema = JOBS[name].payload;
  if (!Value.Check(schema, data)) {
    const first = Value.Errors(schema, data)[0];
    throw new InvalidJobPayloadError(`Invalid payload for ${name}: ${first?.instancePath || '/'} ${first?.message ?? ''}`);
  }
  return data as JobPayload<N>;
}

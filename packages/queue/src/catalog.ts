import type { JobsOptions } from 'bullmq';
import { Type, type Static, type TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';

/**
 * The job catalog: every queue, its job names, their payload schemas and options, shared by the
 * producers (API) and the consumers (dispatcher). Payloads carry ids, never rows or secrets.
 * Never rename a queue or a job: add a `.v2` name instead.
 */
export const QUEUES = {
  dispatch: 'dispatch',
  reports: 'reports',
  maintenance: 'maintenance',
  webhooks: 'webhooks',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

const MessageId = Type.String({ format: 'uuid' });

/** One status report of a device about one of its messages (decisions.md, "Reports"). */
export const DeviceReport = Type.Object(
  {
    id: Type.String({ description: 'Message id.' }),
    status: Type.Enum(['sending', 'sent', 'delivered', 'failed'], { description: '`sending`: the device has the message (the acknowledgement).' }),
    error: Type.Optional(Type.String({ maxLength: 1000, description: 'Why the message failed, as the device saw it.' })),
    at: Type.Optional(Type.String({ format: 'date-time', description: 'When it happened on the device; default: when received.' })),
    retryable: Type.Optional(
      Type.Boolean({
        description:
          'With `failed`: true only when the SMS provably never left the device (nothing reached the network); smsgw may then give the message to another device. Default false: the failure is final.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeviceReport = Static<typeof DeviceReport>;

// The report jobs' options: about nine hours of retries, as a Postgres outage must not drop the reports of the phones.
const REPORT_JOB_OPTIONS = {
  attempts: 16,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
} satisfies JobsOptions;

export const JOBS = {
  /** Assign a device to a pending message and wake it. `jobId` is the message id. */
  'message.dispatch': {
    queue: QUEUES.dispatch,
    payload: Type.Object({ messageId: MessageId }, { additionalProperties: false }),
    options: {
      attempts: 8,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      // A failed job is removed so that the outbox sweep can enqueue the still-pending message again.
      removeOnFail: true,
    } satisfies JobsOptions,
  },
  /** Apply a batch of reports of one device (checked by the API to be the device's own messages). */
  'device.reports': {
    queue: QUEUES.reports,
    payload: Type.Object(
      { deviceId: Type.String({ format: 'uuid' }), receivedAt: Type.String({ format: 'date-time' }), reports: Type.Array(DeviceReport, { maxItems: 500 }) },
      { additionalProperties: false },
    ),
    options: REPORT_JOB_OPTIONS,
  },
  /**
   * The reports of several devices (an API process's device requests of one enqueue), up to 500 in
   * all: one job where `device.reports` needed one per device. The dispatcher applies them as it
   * applies those, which it still takes from API processes of earlier versions.
   */
  'device.reports.v2': {
    queue: QUEUES.reports,
    payload: Type.Object(
      {
        receivedAt: Type.String({ format: 'date-time' }),
        devices: Type.Array(
          Type.Object(
            { deviceId: Type.String({ format: 'uuid' }), reports: Type.Array(DeviceReport, { minItems: 1, maxItems: 500 }) },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 500 },
        ),
      },
      { additionalProperties: false },
    ),
    options: REPORT_JOB_OPTIONS,
  },
  /**
   * One attempt at a webhook delivery; `jobId` is the delivery id. The worker schedules the next
   * attempt of a failed request itself (its own backoff, recorded in the delivery row); BullMQ's
   * attempts only cover the worker's own failures (Postgres away), after which the outbox sweep
   * enqueues the still-pending delivery again.
   */
  'webhook.deliver': {
    queue: QUEUES.webhooks,
    payload: Type.Object(
      { deliveryId: Type.String({ format: 'uuid' }), webhookId: Type.String({ format: 'uuid', description: 'The endpoint, whose slot is taken first.' }) },
      { additionalProperties: false },
    ),
    options: { attempts: 10, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: true } satisfies JobsOptions,
  },
  /** Leases, expiry and the outbox: run by one dispatcher at a time on a schedule. */
  'maintenance.sweep': {
    queue: QUEUES.maintenance,
    payload: Type.Object({}, { additionalProperties: false }),
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } } satisfies JobsOptions,
  },
} as const satisfies Record<string, { queue: QueueName; payload: TSchema; options: JobsOptions }>;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]['payload']>;

export class InvalidJobPayloadError extends Error {
  override name = 'InvalidJobPayloadError';
}

// Compiled once: payloads are checked for every job, thousands a second.
const validators = new Map<JobName, Validator>();
function validator(name: JobName): Validator {
  let compiled = validators.get(name);
  if (!compiled) validators.set(name, (compiled = Compile(JOBS[name].payload) as unknown as Validator));
  return compiled;
}

/** Checks a payload against the catalog, at enqueue and at consume. */
export function parsePayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  const check = validator(name);
  if (!check.Check(data)) {
    const first = check.Errors(data)[0];
    throw new InvalidJobPayloadError(`Invalid payload for ${name}: ${first?.instancePath || '/'} ${first?.message ?? ''}`);
  }
  return data as JobPayload<N>;
}

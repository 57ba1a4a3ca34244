import {
  AppError, RECIPIENT_OPTED_OUT, type BurstLog, type SendTimingInput, availabilityWindows, isE164, isUuid, newId, quotaPeriod, sendTiming,
} from '@smsgw/core';
import type { ApiConfig } from '@smsgw/config';
import type { Db } from './client.ts';
import type { Sql } from './sql.ts';
import type { UserRow } from './users.ts';
import { foreignGroupIds, groupMemberPhones } from './groups.ts';
import type { MessageTexts, NewCallback } from './messages.ts';
import { inTransaction, storeSend, type Queryable, type StoredSend } from './store-send.ts';
import type { DeliveryRef } from './webhook-deliveries.ts';

/**
 * The `message.status` live event of a message just stored (the shape of @smsgw/queue's
 * `UserEvent`): queued, or failed at once (its recipient opted out).
 */
export interface QueuedEvent {
  userId: string;
  event: {
    type: 'message.status';
    data: {
      id: string; status: 'queued' | 'failed'; state: 'pending' | 'failed'; batch_id: string | null; device_id: string | null; error: string | null;
      created_at: string; updated_at: string; sent_at: null; delivered_at: null; failed_at: string | null;
    };
  };
}

/**
 * Accepting a send, shared by the API (`POST /api/sms/send`, `send-template`) and the operator CLI
 * (`smsgw message send`). It lives here, not in an app, because both apps use it; Redis comes in as
 * two functions of @smsgw/queue, so that this package needs no BullMQ.
 */
export interface SendDeps {
  db: Db;
  sql: Sql;
  /** Enqueues one dispatch job per message, in one round trip, delayed until `at` if given (`enqueueDispatch` on the dispatch queue). */
  enqueueDispatch: (messageIds: readonly string[], at: Date | null) => Promise<void>;
  /** Enqueues webhook deliveries (`enqueueWebhookDeliveries` on the webhooks queue): the `message.failed` of opted-out recipients. */
  enqueueWebhookDeliveries: (deliveries: DeliveryRef[]) => Promise<void>;
  /** Publishes the user's live events (GET /api/v1/events): `publishUserEvents` on QUEUE_PREFIX. */
  publishUserEvents: (events: QueuedEvent[]) => Promise<void>;
  config: Pick<
    ApiConfig,
    'MAX_RECIPIENTS' | 'MONTHLY_QUOTA_DEFAULT' | 'DEVICE_AVAILABLE_SECONDS' | 'DEVICE_HEARTBEAT_SECONDS' | 'DEVICE_STREAM_GRACE_SECONDS' | 'MESSAGE_TTL_SECONDS'
  >;
  /** Where an enqueue that failed is reported (the messages are stored; the outbox sweep enqueues them). */
  incidents: Pick<BurstLog, 'report'>;
}

/** Stores the request's Idempotency-Key with the response, in the transaction of the messages. */
export interface SendRecorder {
  record(client: Queryable, body: object): Promise<void>;
  /** Replaces the recorded response in the same transaction (when some recipients opted out). */
  amend(client: Queryable, body: object): Promise<void>;
}

export interface SendInput {
  user: UserRow;
  recipients: string[];
  groupIds: string[];
  deviceId: string | undefined;
  /** The text of each recipient, once the recipients are known (a direct text, or a rendered template). */
  compose: (recipients: string[]) => Promise<MessageTexts> | MessageTexts;
  /** Stores the request's Idempotency-Key with the response, first in the transaction of the messages. */
  idempotency: SendRecorder | undefined;
  /** `send_at`, and `valid_until` or `ttl_seconds`, as the caller gave them (checked here). */
  timing?: SendTimingInput;
  /** The SIM slot, 1 to 3; undefined: the device's default. */
  simNumber?: number | undefined;
  /**
   * A batch even for one recipient, named by `externalId` if given (unique per user: a reuse is 409
   * `message_exists`): a client API whose one message is one batch (SMS Gate's).
   */
  batch?: { externalId: string | null };
  /** SMS Gate's priority (-128..127, default 0): 100 or more skips the devices' pacing. */
  priority?: number;
  /** Whether the phone asks for a delivery report (default true). */
  withDeliveryReport?: boolean;
  /** A callback for the events of the send's messages (Kannel's dlr-url), stored with them (its id is made here). */
  callback?: Omit<NewCallback, 'id'> | undefined;
  /** With no device available now, store the send anyway to wait for one (Kannel's "queued for later delivery") instead of refusing it. */
  queueWhenNoDevice?: boolean;
  /** Twilio's `StatusCallback`, stored with each message. */
  statusCallback?: string;
}

export interface SendResponse {
  message_ids: string[];
  recipients_count: number;
  status: 'accepted';
  batch_id?: string;
  /** The recipients on the user's opt-out list: their messages are stored failed, never sent, not charged. */
  opted_out?: string[];
  /** Only with `queueWhenNoDevice`: no device was available, the messages wait for one. */
  queued_for_device?: true;
}

// Postgres text cannot hold U+0000, and an unpaired UTF-16 surrogate is not a character: it would be
// stored as U+FFFD, silently changing the text.
const UNSENDABLE = /[\u0000\p{Cs}]/u;

/** Refuses a message text that cannot be stored and sent as given (400 `invalid_request` naming `field`). */
export function assertSendableText(text: string, field: string): void {
  const found = UNSENDABLE.exec(text);
  if (!found) return;
  const what = found[0] === '\u0000' ? 'a NUL character' : 'an unpaired UTF-16 surrogate';
  throw new AppError('invalid_request', `Invalid field '${field}': contains ${what}, which cannot be sent.`);
}

/**
 * Accepts a send: checks it in the order of decisions.md ("Sending"), then stores the quota charge,
 * the batch and every message in one transaction and enqueues one dispatch job per message in one
 * round trip. A refused request changes nothing.
 */
export async function sendMessages(deps: SendDeps, input: SendInput): Promise<SendResponse> {
  const { db, config } = deps;
  const { user, simNumber } = input;

  const now = new Date();
  const timing = sendTiming(input.timing ?? {}, now, config);
  if (simNumber !== undefined && !(Number.isInteger(simNumber) && simNumber >= 1 && simNumber <= 3)) {
    throw new AppError('invalid_request', "Invalid field 'sim_number': must be 1, 2 or 3.");
  }
  if (!input.recipients.every(isE164)) throw new AppError('invalid_phone_number');
  const members = await expandGroups(db, user.id, input.groupIds);

  // Listed numbers first, then group members; de-duplicated on the exact E.164 string.
  const recipients = [...new Set([...input.recipients, ...members])];
  if (recipients.length === 0) {
    throw new AppError('invalid_request', 'No recipients: give at least one phone number in recipients, or groups with members in group_ids.');
  }
  if (recipients.length > config.MAX_RECIPIENTS) {
    throw new AppError('too_many_recipients', `Too many recipients: ${recipients.length}, at most ${config.MAX_RECIPIENTS} per request.`);
  }

  const texts = await input.compose(recipients);
  if (input.deviceId !== undefined && !isUuid(input.deviceId)) throw deviceNotFound(input.deviceId);
  // A scheduled send needs a device when it is due, not now: only a named device must exist.
  const gate = {
    deviceId: input.deviceId ?? null, windows: timing.sendAt === null ? availabilityWindows(config, now) : null, queueWhenUnavailable: input.queueWhenNoDevice === true,
  };

  const ids = recipients.map(() => newId());
  const batchId = newId();
  // A batch asked for is named by the caller's id, else by its own (so that a later caller's id cannot take that name).
  const batch = recipients.length > 1 || input.batch
    ? { id: batchId, recipientsCount: recipients.length, externalId: input.batch ? (input.batch.externalId ?? batchId) : null }
    : null;
  const response: SendResponse = {
    message_ids: ids,
    recipients_count: recipients.length,
    status: 'accepted',
    ...(batch && { batch_id: batch.id }),
  };

  const messages = {
    ids, recipients, texts, userId: user.id, batch, requestedDeviceId: input.deviceId ?? null, createdAt: now, ...timing, simNumber: simNumber ?? null,
    priority: input.priority ?? 0, withDeliveryReport: input.withDeliveryReport ?? true,
    callback: input.callback ? { id: newId(), ...input.callback } : null,
    statusCallback: input.statusCallback ?? null,
  };
  const charge = { period: quotaPeriod(now).start, limit: user.monthlyQuota ?? config.MONTHLY_QUOTA_DEFAULT };
  // One statement stores it all (atomic by itself).
  const { idempotency } = input;
  const accepted = (stored: StoredSend): StoredSend => {
    // In the order of decisions.md ("Sending"): the named device, availability (unless every recipient opted out), then quota.
    if (stored.device === 'missing') throw deviceNotFound(input.deviceId!);
    if (stored.device === 'unavailable' && !gate.queueWhenUnavailable) throw new AppError('no_devices');
    if (!stored.charged) throw new AppError('quota_exceeded');
    const optedOut = new Set(stored.optedOut);
    if (optedOut.size > 0) response.opted_out = recipients.filter((_, i) => optedOut.has(ids[i]!));
    if (stored.device === 'unavailable') response.queued_for_device = true;
    return stored;
  };
  // With an Idempotency-Key, the key goes first in a transaction of the two, so that a concurrent
  // duplicate waits at the key; which recipients opted out is known after the statement, and then
  // amends the recorded response.
  const stored = await (idempotency
    ? inTransaction(deps.sql, async (client) => {
        await idempotency.record(client, response);
        // A refusal throws inside the transaction: the key is not kept either.
        const result = accepted(await storeSend(client, messages, charge, gate));
        if (result.optedOut.length > 0) await idempotency.amend(client, response);
        return result;
      })
    : storeSend(deps.sql, messages, charge, gate).then(accepted)
  ).catch((error: unknown) => {
    throw isExternalIdTaken(error) ? new AppError('message_exists') : error;
  });

  const failed = new Set(stored.optedOut);
  const queued = ids.filter((id) => !failed.has(id));
  // The jobs, the webhooks and the live events go out together (a stalled Redis costs one command timeout, not three).
  await Promise.all([
    deps.enqueueDispatch(queued, timing.sendAt).catch((error: unknown) => {
      // The messages are committed and stay pending: the dispatcher's outbox sweep enqueues them.
      deps.incidents.report('enqueue failed: messages left to the outbox sweep', error, { count: queued.length });
    }),
    stored.deliveries.length === 0
      ? undefined
      : deps.enqueueWebhookDeliveries(stored.deliveries).catch((error: unknown) => {
          // The delivery rows are the outbox: the dispatcher's sweep enqueues them.
          deps.incidents.report('webhook enqueue failed: left to the outbox sweep', error);
        }),
    publishQueued(deps, user.id, { queued, failed: stored.optedOut }, batch?.id ?? null, input.deviceId ?? null, now),
  ]);
  return response;
}

/** The user's live events (GET /api/v1/events): the new messages, queued or failed. Best effort, as every event. */
async function publishQueued(
  deps: SendDeps, userId: string, ids: { queued: string[]; failed: string[] }, batchId: string | null, deviceId: string | null, now: Date,
): Promise<void> {
  const at = now.toISOString();
  const common = { batch_id: batchId, device_id: deviceId, created_at: at, updated_at: at, sent_at: null, delivered_at: null } as const;
  const queued = { ...common, status: 'queued', state: 'pending', error: null, failed_at: null } as const;
  const failed = { ...common, status: 'failed', state: 'failed', error: RECIPIENT_OPTED_OUT, failed_at: at } as const;
  try {
    const event = (id: string, data: typeof queued | typeof failed): QueuedEvent => ({ userId, event: { type: 'message.status', data: { id, ...data } } });
    await deps.publishUserEvents([...ids.queued.map((id) => event(id, queued)), ...ids.failed.map((id) => event(id, failed))]);
  } catch (error) {
    deps.incidents.report('publishing message status events failed', error);
  }
}

/** The phones of the groups' members, in one query; any group that is not the user's is refused. */
async function expandGroups(db: Db, userId: string, groupIds: string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const malformed = groupIds.find((id) => !isUuid(id));
  const unknown = malformed ?? (await foreignGroupIds(db, { userId, groupIds: [...new Set(groupIds)] }))[0];
  if (unknown !== undefined) throw new AppError('group_not_found', `Group ${unknown} not found.`);
  return groupMemberPhones(db, [...new Set(groupIds)]);
}

/** The unique violation of a batch's external id (the whole statement, and so the send, did nothing). */
function isExternalIdTaken(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'batches_user_id_external_id_key';
}

function deviceNotFound(deviceId: string): AppError {
  return new AppError('device_not_found', `Device ${deviceId} not found or not enabled.`);
}

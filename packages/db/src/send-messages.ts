import {
  AppError,
  RECIPIENT_OPTED_OUT,
  type BurstLog,
  type SendTimingInput,
  availabilityWindows,
  isE164,
  isUuid,
  newId,
  protocolsWith,
  quotaPeriod,
  sendTiming,
  toStatusEvent,
} from '@smsgw/core';
import type { ApiConfig } from '@smsgw/config';
import { announceTransitions, type LiveEvent } from './announce-transitions.ts';
import type { Sql } from './sql.ts';
import type { UserRow } from './users.ts';
import { foreignGroupIds, groupMemberPhones } from './groups.ts';
import type { MessageTexts, NewCallback } from './messages.ts';
import { inTransaction, type Queryable } from './sql.ts';
import { storeSend, type StoredSend } from './store-send.ts';
import type { DeliveryRef } from './webhook-deliveries.ts';

/**
 * Accepting a send, shared by the API (`POST /api/sms/send`, `send-template`, the compatibility
 * APIs), the operator CLI (`smsgw message send`) and the dispatcher (the replies of a Twilio TwiML
 * answer). It lives here, not in an app, because they all use it; Redis comes in as functions of
 * @smsgw/queue, so that this package needs no BullMQ, and it runs on the plain pool (no Prisma).
 */
export interface SendDeps {
  sql: Sql;
  /** Enqueues one dispatch job per message, in one round trip, delayed until `at` if given (`enqueueDispatch` on the dispatch queue). */
  enqueueDispatch: (messageIds: readonly string[], at: Date | null) => Promise<void>;
  /** Enqueues webhook deliveries (`enqueueWebhookDeliveries` on the webhooks queue): the `message.failed` of opted-out recipients. */
  enqueueWebhookDeliveries: (deliveries: DeliveryRef[]) => Promise<void>;
  /** Publishes the user's live events (GET /api/v1/events): `publishUserEvents` on QUEUE_PREFIX. */
  publishUserEvents: (events: LiveEvent[]) => Promise<void>;
  config: Pick<
    ApiConfig,
    'MAX_RECIPIENTS' | 'MONTHLY_QUOTA_DEFAULT' | 'DEVICE_AVAILABLE_SECONDS' | 'DEVICE_HEARTBEAT_SECONDS' | 'DEVICE_STREAM_GRACE_SECONDS' | 'MESSAGE_TTL_SECONDS'
  >;
  /** Where an enqueue that failed is reported (the messages are stored; the outbox sweep enqueues them). */
  incidents: Pick<BurstLog, 'report'>;
  /**
   * Assigns messages that are due now at once, as their dispatch job would (the API's send:
   * @smsgw/assign's `assignDevices`, the one home of that decision), and gives back those it left
   * pending, for their dispatch jobs. Without it, every message gets a dispatch job.
   */
  assignNow?: (messageIds: readonly string[]) => Promise<readonly string[]>;
  /**
   * Takes the assignment (and the dispatch jobs of what it left) to finish after the answer, and
   * says whether it did: the messages are committed, and a process that dies first leaves them
   * pending for the outbox sweep. Without it, or when it declines (too much work already in the
   * background: the sends then slow down instead of piling up), the send waits for them.
   */
  inBackground?: (work: Promise<unknown>) => boolean;
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
  /** A callback for the events of the send's messages (Kannel's dlr-url, Twilio's StatusCallback), stored with them (its id is made here). */
  callback?: Omit<NewCallback, 'id'> | undefined;
  /** With no device available now, store the send anyway to wait for one (Kannel's "queued for later delivery") instead of refusing it. */
  queueWhenNoDevice?: boolean;
  /**
   * SMS Gate's end-to-end encryption: `recipients` and the text are ciphertexts the caller checked,
   * stored as they are (no E.164 check, no opt-out lookup, no groups) and sent by SMS Gate phones only.
   */
  encrypted?: boolean;
  /**
   * Keeps a recipient listed twice as two messages, in order (the replies of one TwiML answer,
   * which may answer the sender twice); by default the recipients are de-duplicated.
   */
  repeatRecipients?: boolean;
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
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what Postgres cannot store.
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
  const { sql, config } = deps;
  const { user, simNumber } = input;

  const now = new Date();
  const timing = sendTiming(input.timing ?? {}, now, config);
  if (simNumber !== undefined && !(Number.isInteger(simNumber) && simNumber >= 1 && simNumber <= 3)) {
    throw new AppError('invalid_request', "Invalid field 'sim_number': must be 1, 2 or 3.");
  }
  if (input.encrypted && input.groupIds.length > 0) throw new AppError('invalid_request', 'An encrypted send names its recipients alone, no groups.');
  if (!input.encrypted && !input.recipients.every(isE164)) throw new AppError('invalid_phone_number');
  const members = await expandGroups(sql, user.id, input.groupIds);

  // Listed numbers first, then group members; de-duplicated on the exact E.164 string.
  const listed = [...input.recipients, ...members];
  const recipients = input.repeatRecipients ? listed : [...new Set(listed)];
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
    deviceId: input.deviceId ?? null,
    windows: timing.sendAt === null ? availabilityWindows(config, now) : null,
    queueWhenUnavailable: input.queueWhenNoDevice === true,
    ...(input.encrypted && { protocols: protocolsWith('encryptedMessages') }),
  };

  const ids = recipients.map(() => newId());
  const batchId = newId();
  // A batch asked for is named by the caller's id, else by its own (so that a later caller's id cannot take that name).
  const batch =
    recipients.length > 1 || input.batch
      ? { id: batchId, recipientsCount: recipients.length, externalId: input.batch ? (input.batch.externalId ?? batchId) : null }
      : null;
  const response: SendResponse = {
    message_ids: ids,
    recipients_count: recipients.length,
    status: 'accepted',
    ...(batch && { batch_id: batch.id }),
  };

  const messages = {
    ids,
    recipients,
    texts,
    userId: user.id,
    batch,
    requestedDeviceId: input.deviceId ?? null,
    createdAt: now,
    ...timing,
    simNumber: simNumber ?? null,
    priority: input.priority ?? 0,
    withDeliveryReport: input.withDeliveryReport ?? true,
    callback: input.callback ? { id: newId(), ...input.callback } : null,
    encrypted: input.encrypted === true,
  };
  const charge = { period: quotaPeriod(now).start, limit: user.monthlyQuota ?? config.MONTHLY_QUOTA_DEFAULT };
  // One statement stores it all (atomic by itself).
  const { idempotency } = input;
  const accepted = (stored: StoredSend): StoredSend => {
    // In the order of decisions.md ("Sending"): the named device, availability (unless every recipient opted out), then quota.
    if (stored.device === 'missing') throw deviceNotFound(input.deviceId!);
    if (stored.device === 'wrong_protocol') {
      throw new AppError('encrypted_needs_sms_gate', `Device ${input.deviceId} is not an SMS Gate phone: only SMS Gate phones can send encrypted messages.`);
    }
    if (stored.device === 'no_protocol')
      throw new AppError('encrypted_needs_sms_gate', 'You have no SMS Gate phone: only SMS Gate phones can send encrypted messages.');
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
  // A send due now with a device to take it is assigned here (docs/decisions.md, "Sending"); what
  // must wait (scheduled, paced, over budget, no device) is left to its dispatch job.
  const assignNow = timing.sendAt === null && stored.device === 'ok' ? deps.assignNow : undefined;
  const dispatching = (assignNow ? assignOrLeave(deps, assignNow, queued) : Promise.resolve(queued))
    .then((left) => (left.length > 0 ? deps.enqueueDispatch(left, timing.sendAt) : undefined))
    .catch((error: unknown) => {
      // The messages are committed and stay pending: the dispatcher's outbox sweep enqueues them.
      deps.incidents.report('enqueue failed: messages left to the outbox sweep', error, { count: queued.length });
    });
  // An assignment goes on after the answer (it costs more than the jobs it saves, and the client
  // waits for neither); jobs alone are waited for.
  const background = assignNow !== undefined && deps.inBackground?.(dispatching) === true;
  // The jobs, the webhooks and the live events go out together (a stalled Redis costs one command timeout, not three).
  await Promise.all([
    background ? undefined : dispatching,
    announceTransitions(deps, {
      deliveries: stored.deliveries,
      events: storedEvents(user.id, { queued, failed: stored.optedOut }, batch?.id ?? null, input.deviceId ?? null, now),
    }),
  ]);
  return response;
}

/**
 * The messages the assignment left pending, for their dispatch jobs. When it fails (a stalled Redis
 * or Postgres, most likely, where an enqueue would wait as long again), the messages it did not
 * assign stay pending for the outbox sweep, as when an enqueue fails: the send still answers within
 * one command timeout, and a job for a message it did assign finds it no longer pending.
 */
async function assignOrLeave(deps: SendDeps, assignNow: NonNullable<SendDeps['assignNow']>, ids: string[]): Promise<readonly string[]> {
  try {
    return await assignNow(ids);
  } catch (error) {
    deps.incidents.report('assignment in the send failed: messages left to the outbox sweep', error, { count: ids.length });
    return [];
  }
}

/** The `message.status` events of the new messages (GET /api/v1/events), known without a read: queued, or failed at once (opted out). */
function storedEvents(
  userId: string,
  ids: { queued: string[]; failed: string[] },
  batchId: string | null,
  requestedDeviceId: string | null,
  now: Date,
): LiveEvent[] {
  const common = { batchId, deviceId: null, requestedDeviceId, createdAt: now, updatedAt: now, sentAt: null, deliveredAt: null };
  const event = (id: string, state: 'pending' | 'failed'): LiveEvent => {
    const failed = state === 'failed';
    const data = toStatusEvent({ ...common, id, state, error: failed ? RECIPIENT_OPTED_OUT : null, failedAt: failed ? now : null });
    return { userId, event: { type: 'message.status', data } };
  };
  return [...ids.queued.map((id) => event(id, 'pending')), ...ids.failed.map((id) => event(id, 'failed'))];
}

/** The phones of the groups' members, in one query; any group that is not the user's is refused. */
async function expandGroups(sql: Sql, userId: string, groupIds: string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const malformed = groupIds.find((id) => !isUuid(id));
  const unknown = malformed ?? (await foreignGroupIds(sql, { userId, groupIds: [...new Set(groupIds)] }))[0];
  if (unknown !== undefined) throw new AppError('group_not_found', `Group ${unknown} not found.`);
  return groupMemberPhones(sql, [...new Set(groupIds)]);
}

/** The unique violation of a batch's external id (the whole statement, and so the send, did nothing). */
function isExternalIdTaken(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'batches_user_id_external_id_key';
}

function deviceNotFound(deviceId: string): AppError {
  return new AppError('device_not_found', `Device ${deviceId} not found or not enabled.`);
}

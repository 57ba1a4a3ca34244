import { AppError, type BurstLog, availabilityWindows, isDeviceAvailable, isE164, isUuid, newId, quotaPeriod } from '@smsgw/core';
import type { ApiConfig } from '@smsgw/config';
import {
  chargeQuota,
  findDevice,
  foreignGroupIds,
  groupMemberPhones,
  hasAvailableDevice,
  insertMessages,
  type Db,
  type Sql,
  type MessageTexts,
  type UserRow,
} from '@smsgw/db';
import { enqueueDispatch, type DispatchQueue } from '@smsgw/queue';
import type { IdempotencyRecorder } from './idempotency.ts';

export interface SendDeps {
  db: Db;
  sql: Sql;
  dispatchQueue: DispatchQueue;
  config: ApiConfig;
  /** Where an enqueue that failed is reported (the messages are stored; the outbox sweep enqueues them). */
  incidents: BurstLog;
}

export interface SendInput {
  user: UserRow;
  recipients: string[];
  groupIds: string[];
  deviceId: string | undefined;
  /** The text of each recipient, once the recipients are known (a direct text, or a rendered template). */
  compose: (recipients: string[]) => Promise<MessageTexts> | MessageTexts;
  /** Stores the request's Idempotency-Key with the response, first in the transaction of the messages. */
  idempotency: IdempotencyRecorder | undefined;
}

export interface SendResponse {
  message_ids: string[];
  recipients_count: number;
  status: 'accepted';
  batch_id?: string;
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
  const { user } = input;

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
  await checkDevices(deps, user.id, input.deviceId);

  const now = new Date();
  const ids = recipients.map(() => newId());
  const batch = recipients.length > 1 ? { id: newId(), recipientsCount: recipients.length } : null;
  const response: SendResponse = {
    message_ids: ids,
    recipients_count: recipients.length,
    status: 'accepted',
    ...(batch && { batch_id: batch.id }),
  };

  await db.$transaction(async (tx) => {
    await input.idempotency?.record(tx, response);
    const limit = user.monthlyQuota ?? config.MONTHLY_QUOTA_DEFAULT;
    const charged = await chargeQuota(tx, { userId: user.id, period: quotaPeriod(now).start, count: ids.length, limit });
    if (!charged) throw new AppError('quota_exceeded');
    await insertMessages(tx, {
      ids, recipients, texts, userId: user.id, batch, requestedDeviceId: input.deviceId ?? null, createdAt: now,
    });
  });

  try {
    await enqueueDispatch(deps.dispatchQueue, ids);
  } catch (error) {
    // The messages are committed and stay pending: the dispatcher's outbox sweep enqueues them.
    deps.incidents.report('enqueue failed: messages left to the outbox sweep', error, { count: ids.length });
  }
  return response;
}

/** The phones of the groups' members, in one query; any group that is not the user's is refused. */
async function expandGroups(db: Db, userId: string, groupIds: string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const malformed = groupIds.find((id) => !isUuid(id));
  const unknown = malformed ?? (await foreignGroupIds(db, { userId, groupIds: [...new Set(groupIds)] }))[0];
  if (unknown !== undefined) throw new AppError('group_not_found', `Group ${unknown} not found.`);
  return groupMemberPhones(db, [...new Set(groupIds)]);
}

async function checkDevices(deps: SendDeps, userId: string, deviceId: string | undefined): Promise<void> {
  const windows = availabilityWindows(deps.config, new Date());
  if (deviceId !== undefined) {
    const device = isUuid(deviceId) ? await findDevice(deps.db, { userId, id: deviceId }) : null;
    if (!device || !device.enabled) throw new AppError('device_not_found', `Device ${deviceId} not found or not enabled.`);
    if (!isDeviceAvailable(device, windows)) throw new AppError('no_devices');
    return;
  }
  if (!(await hasAvailableDevice(deps.sql, { userId, windows }))) throw new AppError('no_devices');
}

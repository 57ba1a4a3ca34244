import {
  AppError,
  MAX_BODY_CODE_POINTS,
  STATUS_FILTER_VALUES,
  codePointLength,
  decodeCursor,
  encodeCursor,
  isE164,
  isUuid,
  segmentInfo,
  statesMatching,
  statusOf,
  toMessageRecord,
} from '@smsgw/core';
import { assertSendableText, findMessage, listMessageEvents, listMessages, sendMessages } from '@smsgw/db';
import { enqueueDispatch, enqueueWebhookDeliveries, publishUserEvents } from '@smsgw/queue';
import type { Command } from '../command.ts';
import { notFound, usageError } from '../errors.ts';
import { enabledUser, existingUser, paging, required, wholeNumber, type Flags } from '../flags.ts';

/** A filter of `message list`, checked as GET /api/v1/sms checks its query. */
function filter(flags: Flags, name: string, valid: (value: string) => boolean, expected: string): string | undefined {
  const value = flags[name];
  if (value !== undefined && !valid(value)) throw usageError(`--${name} must be ${expected}`);
  return value;
}

const optional = <T>(value: string | undefined, parse: (value: string) => T): T | undefined => (value === undefined ? undefined : parse(value));

export const messageCommands: Record<string, Command> = {
  'message send': {
    usage: 'message send --user USER --to +E164[,+E164…] --text TEXT [--device DEVICE_ID] [--send-at ISO] [--valid-until ISO | --ttl SECONDS] [--sim 1-3]',
    // POST /api/sms/send of that user: the same checks, in the same order, and the same send.
    run: async (context, flags) => {
      const { db, sql, config } = context;
      const user = await enabledUser(db, flags);
      const recipients = required(flags, 'to')
        .split(',')
        .map((to) => to.trim());
      const text = required(flags, 'text');
      if (codePointLength(text) > MAX_BODY_CODE_POINTS) {
        throw new AppError('invalid_request', `--text must be at most ${MAX_BODY_CODE_POINTS} characters`);
      }
      assertSendableText(text, 'text');
      const queues = await context.queues();
      const { encoding, segments } = segmentInfo(text);
      return sendMessages(
        {
          sql,
          config,
          incidents: { report: (warning, error, details) => context.warn(warning, error, details) },
          enqueueDispatch: (ids, at) => enqueueDispatch(queues.dispatch, ids, at),
          enqueueWebhookDeliveries: (deliveries) => enqueueWebhookDeliveries(queues.webhooks, deliveries),
          publishUserEvents: (events) => publishUserEvents(queues.redis, config.QUEUE_PREFIX, events),
        },
        {
          user,
          recipients,
          groupIds: [],
          deviceId: flags.device,
          compose: () => ({ kind: 'same', body: text, segments, encoding }),
          idempotency: undefined,
          timing: { send_at: flags['send-at'], valid_until: flags['valid-until'], ttl_seconds: optional(flags.ttl, (v) => wholeNumber(v, 'ttl', 1)) },
          simNumber: optional(flags.sim, (v) => wholeNumber(v, 'sim', 1, 3)),
        },
      );
    },
  },
  'message list': {
    usage: 'message list --user USER [--status STATUS] [--to +E164] [--batch BATCH_ID] [--device DEVICE_ID] [--limit N] [--offset N | --cursor NEXT_CURSOR]',
    // GET /api/v1/sms: the same filters, paging and page.
    run: async ({ db, listingSql }, flags) => {
      const user = await existingUser(db, flags);
      const status = filter(flags, 'status', (value) => STATUS_FILTER_VALUES.includes(value), `one of ${STATUS_FILTER_VALUES.join(', ')}`);
      const page = paging(flags);
      const cursor = filter(flags, 'cursor', (value) => decodeCursor(value) !== null, 'the next_cursor of a page of this list');
      if (cursor !== undefined && page.offset > 0) throw usageError('give --cursor or --offset, not both');
      const result = await listMessages(listingSql, {
        userId: user.id,
        states: status === undefined ? undefined : statesMatching(status),
        to: filter(flags, 'to', isE164, 'a number in E.164 format (+15551234567)'),
        batchId: filter(flags, 'batch', isUuid, 'a batch id (UUID)'),
        deviceId: filter(flags, 'device', isUuid, 'a device id (UUID)'),
        cursor: cursor === undefined ? undefined : decodeCursor(cursor)!,
        ...page,
      });
      return {
        data: result.rows.map(toMessageRecord),
        total: result.total,
        total_exact: result.totalExact,
        has_more: result.nextCursor !== null,
        next_cursor: result.nextCursor && encodeCursor(result.nextCursor),
        ...page,
      };
    },
  },
  'message show': {
    usage: 'message show --user USER --message MESSAGE_ID',
    // GET /api/v1/sms/:id, and the states the message went through.
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const id = required(flags, 'message');
      const message = isUuid(id) ? await findMessage(db, { userId: user.id, id }) : null;
      if (!message) throw notFound(`no message with id ${id} for user ${flags.user}`);
      const events = await listMessageEvents(db, message.id);
      const history = [
        { state: 'pending', status: statusOf('pending'), device_id: message.requestedDeviceId, detail: null, at: message.createdAt.toISOString() },
        ...events.map((e) => ({ state: e.state, status: statusOf(e.state), device_id: e.deviceId, detail: e.detail, at: e.at.toISOString() })),
      ];
      return { ...toMessageRecord(message), history };
    },
  },
};

import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isE164, segmentInfo, twilioSid, twilioStatus, uuidOfSid } from '@smsgw/core';
import {
  assertSendableText,
  deleteFinalMessage,
  findSimByPhoneNumber,
  findTwilioMessage,
  listTwilioMessages,
  loadCancelTargets,
  redactMessageBody,
  sendMessages,
  twilioAccount,
  type TwilioMessageRow,
  type UserRow,
} from '@smsgw/db';
import { sendDeps } from '../../../services/send-deps.ts';
import { cancelTargets } from '../../../services/cancel-messages.ts';
import { TwilioError, invalid, twilioErrors } from './errors.ts';
import { TwilioMessage, toTwilioMessage, type Account } from './resource.ts';
import { statusCallbackOf } from './status-callback.ts';

const tags = ['twilio'];
const MAX_BODY = 1600;
/** Twilio's scheduling window: 15 minutes to 35 days ahead. */
const [SEND_AT_MIN_S, SEND_AT_MAX_S] = [900, 35 * 24 * 3600];
const MAX_PAGE_SIZE = 1000;
const FormValue = Type.Union([Type.String(), Type.Array(Type.String())]);
/** Twilio's form parameters, read by name in the handlers (the SDKs send any of them). */
const CreateForm = Type.Record(Type.String(), FormValue, { examples: [{ To: '+14155550123', Body: 'Your order has shipped.' }] });
const UpdateForm = Type.Record(Type.String(), FormValue, { examples: [{ Status: 'canceled' }] });
const Params = Type.Object({ AccountSid: Type.String({ maxLength: 64 }) });
const SidParams = Type.Object({ AccountSid: Type.String({ maxLength: 64 }), Sid: Type.String({ maxLength: 64 }) });
const ListQuery = Type.Object({
  To: Type.Optional(Type.String()),
  From: Type.Optional(Type.String()),
  DateSent: Type.Optional(Type.String()),
  'DateSent<': Type.Optional(Type.String()),
  'DateSent>': Type.Optional(Type.String()),
  PageSize: Type.Optional(Type.String()),
  Page: Type.Optional(Type.String()),
  PageToken: Type.Optional(Type.String()),
});
const Page = Type.Object({
  messages: Type.Array(TwilioMessage),
  uri: Type.String(),
  first_page_uri: Type.String(),
  next_page_uri: Type.Union([Type.String(), Type.Null()]),
  previous_page_uri: Type.Union([Type.String(), Type.Null()]),
  page: Type.Integer(),
  page_size: Type.Integer(),
  start: Type.Integer(),
  end: Type.Integer(),
});

/**
 * Twilio's `Messages.json` (docs/compatibility.md): one Twilio message is one smsgw message, sent by
 * smsgw's one send function, read from its record, cancelled by its cancel. Its SID is `SM` and the
 * 32 hex digits of the message id.
 */
const messageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/Messages.json',
    {
      schema: {
        tags,
        summary: "Send a message: 201 with Twilio's Message resource",
        consumes: ['application/x-www-form-urlencoded'],
        params: Params,
        body: CreateForm,
        response: { 201: TwilioMessage, ...twilioErrors(400, 401, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const account = await twilioAccount(app.sql, request.auth.user.id);
      const id = await send(app, request.auth.user, account, request.body);
      return reply.status(201).send(toTwilioMessage(account, (await findTwilioMessage(app.sql, request.auth.user.id, id))!));
    },
  );

  app.get(
    '/Messages.json',
    {
      schema: {
        tags,
        summary: "List messages, newest first, in Twilio's pages",
        params: Params,
        querystring: ListQuery,
        response: { 200: Page, ...twilioErrors(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const account = await twilioAccount(app.sql, request.auth.user.id);
      const pageSize = q.PageSize === undefined ? 50 : Number(q.PageSize);
      if (!Number.isInteger(pageSize) || pageSize < 1) throw invalid(20001, `Invalid PageSize: ${q.PageSize}`);
      const page = q.Page === undefined ? 0 : Number(q.Page);
      if (!Number.isInteger(page) || page < 0) throw invalid(20001, `Invalid Page: ${q.Page}`);
      const after = q.PageToken === undefined ? undefined : await pageTokenMessage(app, request.auth.user.id, q.PageToken);
      const day = q.DateSent === undefined ? undefined : utcDay(q.DateSent, 'DateSent');
      const before = q['DateSent<'] === undefined ? undefined : nextUtcDay(q['DateSent<'], 'DateSent<');
      const since = q['DateSent>'] === undefined ? undefined : utcDay(q['DateSent>'], 'DateSent>');
      const size = Math.min(pageSize, MAX_PAGE_SIZE);
      const rows = await listTwilioMessages(app.sql, {
        userId: request.auth.user.id,
        to: q.To,
        from: q.From,
        limit: size + 1,
        ...(after && { after }),
        ...((day ?? since) && { sentFrom: latest(day, since) }),
        ...((day || before) && { sentBefore: earliest(day && new Date(day.getTime() + 86_400_000), before) }),
      });
      const base = `/2010-04-01/Accounts/${account.accountSid}/Messages.json`;
      const filters = new URLSearchParams(
        Object.entries(q).filter(([k, v]) => v !== undefined && !['Page', 'PageToken', 'PageSize'].includes(k)) as [string, string][],
      );
      const uri = (extra: Record<string, string>) => `${base}?${new URLSearchParams([...filters, ['PageSize', String(size)], ...Object.entries(extra)])}`;
      const shown = rows.slice(0, size);
      const last = shown.at(-1);
      return {
        messages: shown.map((m) => toTwilioMessage(account, m)),
        uri: uri(page > 0 ? { Page: String(page), ...(q.PageToken && { PageToken: q.PageToken }) } : {}),
        first_page_uri: uri({ Page: '0' }),
        next_page_uri: rows.length > size && last ? uri({ Page: String(page + 1), PageToken: `PA${twilioSid('SM', last.id)}` }) : null,
        previous_page_uri: null,
        page,
        page_size: size,
        start: page * size,
        end: page * size + Math.max(shown.length - 1, 0),
      };
    },
  );

  app.get(
    '/Messages/:Sid.json',
    {
      schema: { tags, summary: 'A message', params: SidParams, response: { 200: TwilioMessage, ...twilioErrors(401, 404, 429) } },
    },
    async (request) => {
      const account = await twilioAccount(app.sql, request.auth.user.id);
      return toTwilioMessage(account, await ownMessage(app, request.auth.user.id, request.params.Sid, request.url));
    },
  );

  app.post(
    '/Messages/:Sid.json',
    {
      schema: {
        tags,
        summary: 'Cancel a scheduled message (Status=canceled) or redact its text (Body=)',
        consumes: ['application/x-www-form-urlencoded'],
        params: SidParams,
        body: UpdateForm,
        response: { 200: TwilioMessage, ...twilioErrors(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      const account = await twilioAccount(app.sql, userId);
      const message = await ownMessage(app, userId, request.params.Sid, request.url);
      const { Status, Body } = request.body;
      if (Status === undefined && Body === undefined) throw invalid(20001, 'Either Body or Status must be given.');
      if (Status !== undefined) {
        if (Status !== 'canceled') throw invalid(20001, `Invalid Status: ${String(Status)}; only canceled is accepted.`);
        if (twilioStatus(message) !== 'scheduled') throw invalid(30409, 'This message cannot be canceled');
        await cancelTargets(app, userId, await loadCancelTargets(app.sql, { userId, ids: [message.id] }));
      }
      if (Body !== undefined) {
        if (Body !== '') throw invalid(20001, "A message's Body can only be redacted (Body= with an empty value).");
        if (!['sent', 'delivered', 'undelivered', 'failed', 'canceled'].includes(twilioStatus(message))) {
          throw invalid(20009, 'A message can only be redacted once it is final.');
        }
        await redactMessageBody(app.sql, userId, message.id);
      }
      return toTwilioMessage(account, (await findTwilioMessage(app.sql, userId, message.id))!);
    },
  );

  app.delete(
    '/Messages/:Sid.json',
    {
      schema: { tags, summary: 'Delete a final message: 204', params: SidParams, response: { 204: Type.Null(), ...twilioErrors(400, 401, 404, 429) } },
    },
    async (request, reply) => {
      const userId = request.auth.user.id;
      const message = await ownMessage(app, userId, request.params.Sid, request.url);
      if (!(await deleteFinalMessage(app.sql, userId, message.id))) throw invalid(20009, 'Cannot delete message because delivery has not been completed.');
      return reply.status(204).send(null);
    },
  );
};
export default messageRoutes;

async function ownMessage(app: FastifyInstance, userId: string, sid: string, url: string): Promise<TwilioMessageRow> {
  const id = uuidOfSid('SM', sid);
  const message = id && (await findTwilioMessage(app.sql, userId, id));
  if (!message) throw new TwilioError(404, 20404, `The requested resource ${url.split('?')[0]} was not found`);
  return message;
}

async function pageTokenMessage(app: FastifyInstance, userId: string, token: string): Promise<{ createdAt: Date; id: string }> {
  const id = token.startsWith('PA') ? uuidOfSid('SM', token.slice(2)) : null;
  const message = id && (await findTwilioMessage(app.sql, userId, id));
  if (!message) throw invalid(20001, `Invalid PageToken: ${token}`);
  return { createdAt: message.createdAt, id: message.id };
}

/** The start of the UTC day of a date (`YYYY-MM-DD`) or date-time (the SDK sends ISO 8601). */
function utcDay(value: string, name: string): Date {
  const at = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  // Years 1 to 9999 only: JavaScript reads dates Postgres cannot store (the fuzz found a 500 on year -271821).
  if (Number.isNaN(at.getTime()) || at.getUTCFullYear() < 1 || at.getUTCFullYear() > 9999) throw invalid(20001, `Invalid ${name}: ${value}`);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/** `DateSent<` is "on or before" that day: before the next one. */
const nextUtcDay = (value: string, name: string) => new Date(utcDay(value, name).getTime() + 86_400_000);
const latest = (a?: Date, b?: Date) => (a && b ? (a > b ? a : b) : (a ?? b)!);
const earliest = (a?: Date, b?: Date) => (a && b ? (a < b ? a : b) : (a ?? b)!);

function one(form: Record<string, string | string[]>, name: string): string | undefined {
  const value = form[name];
  return Array.isArray(value) ? value.at(-1) : value;
}

/** Twilio's checks with its codes and words, then smsgw's one send; the new message's id. */
async function send(app: FastifyInstance, user: UserRow, account: Account, form: Record<string, string | string[]>): Promise<string> {
  const [to, body, from, service] = [one(form, 'To'), one(form, 'Body'), one(form, 'From'), one(form, 'MessagingServiceSid')];
  if (form.MediaUrl !== undefined) throw invalid(21620, 'MMS is not supported by this server: MediaUrl cannot be sent.');
  if (!to) throw invalid(21604, "A 'To' phone number is required.");
  if (!isE164(to)) throw invalid(21211, `The 'To' number ${to} is not a valid phone number.`);
  if (!body) throw invalid(21602, 'Message body is required.');
  if ([...body].length > MAX_BODY) throw invalid(21617, 'The concatenated message body exceeds the 1600 character limit.');
  assertSendableText(body, 'Body');
  if (service !== undefined && service !== account.messagingServiceSid) throw invalid(21701, `The Messaging Service Sid ${service} is invalid.`);
  let sim: { deviceId: string; simNumber: number | undefined } | null = null;
  if (from !== undefined && from !== account.messagingServiceSid) {
    sim = await findSimByPhoneNumber(app.sql, user.id, from);
    if (!sim) throw invalid(21606, `The From phone number ${from} is not a valid, SMS-capable inbound phone number or short code for your account.`);
  }
  const timing = sendTiming(form);
  // Through the Messaging Service when it was named or no SIM was (round-robin): its status callbacks say so.
  const callback = await statusCallbackOf(app, one(form, 'StatusCallback'), account, service !== undefined || sim === null);
  if (await optedOut(app, user.id, to)) throw invalid(21610, 'Attempt to send to unsubscribed recipient');

  const { encoding, segments } = segmentInfo(body);
  const response = await sendMessages(sendDeps(app), {
    user,
    recipients: [to],
    groupIds: [],
    deviceId: sim?.deviceId,
    simNumber: sim?.simNumber,
    timing,
    compose: () => ({ kind: 'same', body, segments, encoding }),
    idempotency: undefined,
    callback,
  });
  app.metrics.messagesAccepted.inc({ endpoint: 'twilio' }, response.recipients_count);
  return response.message_ids[0]!;
}

function sendTiming(form: Record<string, string | string[]>): { send_at?: string; valid_until?: string } {
  const [validity, sendAt, scheduleType] = [one(form, 'ValidityPeriod'), one(form, 'SendAt'), one(form, 'ScheduleType')];
  const now = Date.now();
  const timing: { send_at?: string; valid_until?: string } = {};
  if (validity !== undefined) {
    const seconds = Number(validity);
    if (!/^\d+$/.test(validity) || seconds < 1 || seconds > 36_000) throw invalid(21609, `Invalid ValidityPeriod: ${validity}; it must be 1 to 36000 seconds.`);
    timing.valid_until = new Date(now + seconds * 1000).toISOString();
  }
  if (sendAt !== undefined || scheduleType !== undefined) {
    if (scheduleType !== 'fixed') throw invalid(35114, 'ScheduleType must be fixed to schedule a message.');
    const at = sendAt === undefined ? Number.NaN : new Date(sendAt).getTime();
    if (Number.isNaN(at)) throw invalid(35114, 'Scheduling does not support this timestamp');
    if (at < now + SEND_AT_MIN_S * 1000 || at > now + SEND_AT_MAX_S * 1000) {
      throw invalid(35111, 'SendAt time must be between 900 seconds and 35 days (3024000 seconds) in the future');
    }
    timing.send_at = new Date(at).toISOString();
    // A validity counts from the send time, as Twilio's does from when the message is queued.
    if (validity !== undefined) timing.valid_until = new Date(at + Number(validity) * 1000).toISOString();
  }
  return timing;
}

async function optedOut(app: FastifyInstance, userId: string, phone: string): Promise<boolean> {
  const { rowCount } = await app.sql.query('SELECT 1 FROM opt_outs WHERE user_id = $1 AND phone = $2', [userId, phone]);
  return rowCount === 1;
}

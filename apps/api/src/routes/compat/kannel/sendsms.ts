import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_SCHEDULE_DAYS, WebhookTargetError, checkWebhookUrl, kannelMaskEvents, segmentInfo, type KannelContext } from '@smsgw/core';
import { assertSendableText, authenticateApiKey, sendMessages, touchApiKey, type SendDeps, type SendInput, type UserRow } from '@smsgw/db';
import { ACCEPTED, QUEUED, misformed, rejected, type KannelAnswer } from './answers.ts';
import { decodeText, parseRecipients, sendsmsArgs, type SendsmsArgs } from './sendsms-args.ts';

/** The content types a Kannel POST may have: text/plain is sent; the others Kannel reads are refused as unsupported. */
const SENT_TYPES = new Set(['text/plain', 'application/octet-stream']);
const KNOWN_TYPES = new Set([...SENT_TYPES, 'text/html', 'text/vnd.wap.wml', 'text/xml']);
const TOUCH_INTERVAL_MS = 60_000;

/** Kannel's range checks of the numeric fields it passes on (smsbox's `smsbox_req_handle`); smsgw accepts and ignores those it cannot apply. */
const RANGES: [name: string, field: string, min: number, max: number][] = [
  ['dlr-mask', 'DLR-Mask', -1, 66],
  ['mclass', 'MClass', -1, 3],
  ['pid', 'PID', -1, 255],
  ['rpi', 'RPI', -1, 2],
  ['alt-dcs', 'Alt-DCS', -1, 1],
  ['mwi', 'MWI', -1, 7],
  ['coding', 'Coding', -1, 2],
  ['compress', 'Compress', -1, 1],
];

function contentTypeOf(request: FastifyRequest): { type: string; charset: string | undefined } {
  const [type = '', ...params] = (request.headers['content-type'] ?? '').split(';');
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";]*)"?\s*$/i.exec(p)?.[1]).find((c) => c !== undefined);
  return { type: type.trim().toLowerCase(), charset: charset || undefined };
}

/** The sendsms user: `username` is the user's name, `password` one of its API keys; a refusal counts as a failed authentication. */
async function authorise(app: FastifyInstance, request: FastifyRequest, args: SendsmsArgs): Promise<UserRow> {
  return app.verifyCredential(request, async () => {
    const [username, password] = [args.text('username'), args.text('password')];
    if (!username || !password) return null;
    const found = await authenticateApiKey(app.sql, password);
    if (!found || found.user.name !== username) return null;
    const now = new Date();
    if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) await touchApiKey(app.sql, found.keyId, now);
    return found.user;
  });
}

/** The DLR callback of the request, checked against smsgw's webhook address rules (none without a URL and a mask that selects an event). */
async function callbackOf(app: FastifyInstance, args: SendsmsArgs, context: KannelContext): Promise<SendInput['callback']> {
  const url = args.text('dlr-url');
  const events = kannelMaskEvents(args.number('dlr-mask') ?? 0);
  if (!url || events.length === 0) return undefined;
  if (!/^https?:\/\//i.test(url)) throw misformed('DLR-URL');
  try {
    await checkWebhookUrl(url, app.webhookPolicy);
  } catch (error) {
    if (error instanceof WebhookTargetError) throw rejected(`DLR-URL not allowed: ${error.message.replace(/\.$/, '')}, rejected`);
    throw error;
  }
  return { url, format: 'kannel', events, context };
}

/** `validity` and `deferred`, in minutes: smsgw's validity (capped at MESSAGE_TTL_SECONDS) and scheduled time. 0 and -1 mean unset. */
function timingOf(args: SendsmsArgs, maxTtlSeconds: number, now: Date): SendInput['timing'] {
  const [validity, deferred] = [args.number('validity'), args.number('deferred')];
  if (validity !== undefined && validity < -1) throw misformed('Validity');
  if (deferred !== undefined && (deferred < -1 || deferred > MAX_SCHEDULE_DAYS * 1440)) throw misformed('Deferred');
  return {
    ...(validity !== undefined && validity > 0 && { ttl_seconds: Math.min(validity * 60, maxTtlSeconds) }),
    ...(deferred !== undefined && deferred > 0 && { send_at: new Date(now.getTime() + deferred * 60_000).toISOString() }),
  };
}

/**
 * One `sendsms` request, checked in smsbox's order (content type, credentials, `to`, then each
 * field), then sent through smsgw's one send path: every number of `to` is a message of one send.
 */
export async function sendsms(app: FastifyInstance, deps: SendDeps, request: FastifyRequest): Promise<KannelAnswer> {
  const args = sendsmsArgs(request);
  const isPost = request.method === 'POST';
  const content = isPost ? contentTypeOf(request) : undefined;
  if (content && !KNOWN_TYPES.has(content.type)) throw rejected('Invalid content-type');
  const user = await authorise(app, request, args);

  const to = args.text('to');
  if (to === undefined) throw rejected(isPost ? 'Missing receiver(s) number(s), rejected' : 'Missing receiver number, rejected');
  if (to === '') throw rejected('Empty receiver number not allowed, rejected');
  if (content && !SENT_TYPES.has(content.type)) throw rejected('Unsupported content-type, rejected', 415);
  if (args.bytes('udh') !== undefined) throw rejected('UDH not supported, rejected');
  const { numbers, given } = parseRecipients(to);

  for (const [name, field, min, max] of RANGES) {
    const value = args.number(name);
    if (value !== undefined && (value < min || value > max)) throw misformed(field);
  }
  const priority = args.number('priority');
  if (priority !== undefined && (priority < 0 || priority > 3)) throw misformed('Priority');
  // A POST of application/octet-stream is 8-bit data unless X-Kannel-Coding says otherwise; smsgw sends text only.
  const coding = args.number('coding') ?? (content?.type === 'application/octet-stream' ? 1 : 0);
  if (coding === 1) throw misformed('Coding');

  const raw = isPost ? (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)) : args.bytes('text');
  if (raw === undefined) throw rejected('Missing text, rejected');
  const text = decodeText(raw, content ? content.charset : args.text('charset'), coding === 2 ? 2 : 0);
  if (text === '') throw rejected('Empty text not allowed, rejected');
  assertSendableText(text, 'text');

  const numbersAsGiven = Object.fromEntries([...given].filter(([e164, word]) => e164 !== word));
  const context: KannelContext = {
    from: args.text('from') ?? '',
    username: user.name,
    coding: coding === 2 ? 2 : 0,
    numbers: numbersAsGiven,
  };
  const smsc = args.text('smsc');
  const response = await sendMessages(deps, {
    user,
    recipients: numbers,
    groupIds: [],
    deviceId: smsc || undefined,
    compose: () => ({ kind: 'same', body: text, ...segmentInfo(text) }),
    idempotency: undefined,
    timing: timingOf(args, app.config.MESSAGE_TTL_SECONDS, new Date()),
    callback: await callbackOf(app, args, context),
    queueWhenNoDevice: true,
  });
  app.metrics.messagesAccepted.inc({ endpoint: 'kannel-sendsms' }, response.recipients_count);
  return response.queued_for_device ? QUEUED : ACCEPTED;
}

import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { appDate, type SmsGateClient, type SmsGateWebhook, type SmsReceivedWebhook } from '@smsgw/client';
import { retry } from './retry.ts';

// The app's default webhooks.retry_count.
const WEBHOOK_RETRIES = 15;

export interface InboxOptions {
  client: SmsGateClient;
  log: Logger;
  /** The SIM's own number, sent as `recipient`. */
  ownNumber: string;
  tzOffset: string;
  retryMs: number;
  signal: AbortSignal;
  /** Sent in `system:ping` as the app sends its own version. */
  appVersion: string;
}

/**
 * Incoming SMS as the app forwards them: one signed POST per `sms:received` webhook that the
 * server gave the phone (`GET /webhooks`), with no bearer token, re-signed and retried on every
 * non-2xx. The signing key is read on every attempt, as the app reads it on every send.
 */
export class SmsGateInbox {
  /** Deliveries that got a 2xx. */
  readonly received: SmsReceivedWebhook[] = [];
  webhooks: SmsGateWebhook[] = [];
  // The app's own key (an 8-character nanoid) until the server pushes one in its settings.
  signingKey = nanoid(8);
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: InboxOptions) {}

  /** A fake SMS arrives from `sender`; returns once every webhook got it or gave up. */
  async smsArrived(deviceId: string, sender = `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`, message = `inbound ${nanoid(6)}`): Promise<void> {
    const receivedAt = appDate(new Date(), this.options.tzOffset);
    const payload = {
      // The app's id of an incoming SMS: a 32-bit hash, in hex without leading zeros.
      messageId: createHash('sha256').update(`${sender}\n${message}\n${receivedAt}`).digest().readUInt32BE(0).toString(16),
      message,
      sender,
      recipient: this.options.ownNumber,
      simNumber: 1,
      receivedAt,
      phoneNumber: sender,
    };
    const hooks = this.webhooks.filter((hook) => hook.event === 'sms:received');
    await Promise.all(hooks.map((hook) => this.track(this.post({ id: nanoid(21), webhookId: hook.id, event: 'sms:received', deviceId, payload }, hook.url))));
  }

  /**
   * The app's `system:ping` (its ping service, every `ping.interval_seconds` of its settings) to every
   * such webhook: its health checks, here those of a phone on a charger (AC) with 4G mobile data.
   */
  async ping(deviceId: string): Promise<void> {
    const check = (observedValue: number, observedUnit: string, description: string) => ({ status: 'pass', observedValue, observedUnit, description });
    const health = {
      status: 'pass',
      version: this.options.appVersion,
      releaseId: 1,
      checks: {
        'messages:failed': check(0, 'messages', 'Failed messages for last hour'),
        'connection:status': check(1, 'boolean', 'Internet connection status'),
        'connection:transport': check(1, 'flags', 'Network transport type'),
        'connection:cellular': check(4, 'index', 'Cellular network type'),
        'battery:level': check(100, 'percent', 'Battery level in percent'),
        'battery:charging': check(1, 'flags', 'Is the phone charging?'),
      },
    };
    const hooks = this.webhooks.filter((hook) => hook.event === 'system:ping');
    await Promise.all(
      hooks.map((hook) => this.track(this.post({ id: nanoid(21), webhookId: hook.id, event: 'system:ping', deviceId, payload: { health } }, hook.url))),
    );
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private async post(body: SmsReceivedWebhook | PingWebhook, url: string): Promise<void> {
    try {
      await retry(() => this.options.client.postWebhook(url, this.signingKey, body), {
        retries: WEBHOOK_RETRIES,
        firstDelayMs: this.options.retryMs,
        signal: this.options.signal,
        onError: (error, attempt) => this.options.log.warn({ err: error, attempt }, 'webhook refused, will retry'),
      });
      if (body.event === 'sms:received') this.received.push(body);
    } catch (error) {
      if (!this.options.signal.aborted) this.options.log.warn({ err: error }, 'webhook given up');
    }
  }

  private track(task: Promise<void>): Promise<void> {
    this.inFlight.add(task);
    return task.finally(() => this.inFlight.delete(task));
  }
}

interface PingWebhook {
  id: string;
  webhookId: string;
  event: 'system:ping';
  deviceId: string;
  payload: { health: Record<string, unknown> };
}

const ALPHABET = 'useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict';
function nanoid(size: number): string {
  return [...randomBytes(size)].map((b) => ALPHABET[b & 63]).join('');
}

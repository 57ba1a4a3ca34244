import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { appDate, type MessageSnapshot, type ProcessingState, type SmsGateClient, type SmsGateMessage } from '@smsgw/client';
import { backoff } from './retry.ts';
import { SeenIds } from './seen-ids.ts';
import type { SentLog } from './sent-log.ts';

// The app's state reports (SendStateWorker, one WorkManager job per change, not unique): up to 10
// retries, each job reading the message when it runs; WorkManager runs about 20 such jobs at once.
const PATCH_RETRIES = 10;
const PATCH_CONCURRENCY = 20;
const REMEMBER_MS = 6 * 3600_000;
export const TTL_EXPIRED = 'TTL expired';
export const SIMULATED_FAILURE = 'Send result: RESULT_ERROR_GENERIC_FAILURE (simulated)';
/** The app's text of Android's refusal without service (MessagesService.kt, resultToErrorMessage): the SMS never left the phone. */
export const NO_SERVICE = 'Send result: RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)';

interface HeldMessage {
  id: string;
  recipients: { phoneNumber: string; state: ProcessingState; error?: string }[];
  states: Partial<Record<ProcessingState, string>>;
  validUntil?: string;
  simNumber?: number;
  withDeliveryReport: boolean;
}

export interface OutboxOptions {
  client: SmsGateClient;
  log: Logger;
  sentLog: SentLog;
  sendMs: number;
  deliverMs: number;
  failureRate: number;
  /** Share of messages that fail before leaving the phone, as Android's RESULT_ERROR_NO_SERVICE. */
  retryableFailureRate: number;
  tzOffset: string;
  retryMs: number;
  /** v1.67+: knows `Cancelling` items and `MessageCancelled`. */
  cancels: boolean;
  /** Told how long each successful `PATCH /message` took (ms). */
  onPatched?: (ms: number) => void;
}

/**
 * The phone's message store, keyed by the message id as the app's database is: a pulled id it
 * already holds is never sent again (its current state is reported instead). New messages are
 * sent one at a time, and every state change is reported as a full snapshot of one message, read
 * when the report goes out, so reports can overtake each other as the app's do.
 */
export class SmsGateOutbox {
  readonly sent: string[] = [];
  private readonly held = new SeenIds<HeldMessage>(REMEMBER_MS);
  private readonly queue: HeldMessage[] = [];
  private sending: Promise<void> | undefined;
  private readonly deliveries = new Map<NodeJS.Timeout, HeldMessage>();
  private readonly patches: { id: string; attempt: number }[] = [];
  private readonly patching = new Set<Promise<void>>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly options: OutboxOptions) {}

  /** What one pull returned. */
  receive(items: SmsGateMessage[]): void {
    for (const item of items) {
      const known = this.held.get(item.id);
      if (known) {
        if (item.state === 'Cancelling' && this.options.cancels) this.cancel(item.id);
        else this.report(item.id);
        continue;
      }
      if (item.state === 'Cancelling') {
        // v1.67+: a message it never had is reported cancelled for every recipient; older apps ignore the item.
        if (this.options.cancels) this.hold(item, 'Cancelled');
        continue;
      }
      if (item.state !== undefined && item.state !== 'Pending') continue;
      this.queue.push(this.hold(item, 'Pending'));
      this.kick();
    }
  }

  /** `MessageCancelled`, or a `Cancelling` item: a message not yet handed to the radio is cancelled. */
  cancel(id: string): void {
    const message = this.held.get(id);
    if (!message || this.state(message) !== 'Pending') return;
    this.move(message, 'Cancelled');
  }

  /** Stops sending; fires the delivery reports due and waits for the reports in flight (no more retries). */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    await this.sending;
    for (const [timer, message] of this.deliveries) {
      clearTimeout(timer);
      this.move(message, 'Delivered');
    }
    for (const timer of this.retryTimers) clearTimeout(timer);
    while (this.patching.size > 0) await Promise.race(this.patching);
  }

  private hold(item: SmsGateMessage, state: ProcessingState): HeldMessage {
    const message: HeldMessage = {
      id: item.id,
      recipients: item.phoneNumbers.map((phoneNumber) => ({ phoneNumber, state })),
      states: { [state]: this.now() },
      validUntil: item.validUntil,
      ...(item.simNumber !== undefined && { simNumber: item.simNumber }),
      withDeliveryReport: item.withDeliveryReport ?? true,
    };
    this.held.add(item.id, message);
    // The app stores a message without reporting it; a cancelled one it never had is reported at once.
    if (state !== 'Pending') this.report(item.id);
    return message;
  }

  /** Starts the sender unless it runs; what it did not see before it stopped starts it again. */
  private kick(): void {
    if (this.sending || this.closed) return;
    this.sending = this.sendQueued()
      .catch((error: unknown) => this.options.log.error({ err: error }, 'sending stopped'))
      .finally(() => {
        this.sending = undefined;
        if (this.queue.length > 0) this.kick();
      });
  }

  private async sendQueued(): Promise<void> {
    for (let message = this.queue.shift(); message && !this.closed; message = this.queue.shift()) {
      if (this.state(message) !== 'Pending') continue;
      // Checked just before sending, as the app does.
      if (message.validUntil !== undefined && Date.parse(message.validUntil) <= Date.now()) {
        this.move(message, 'Failed', TTL_EXPIRED);
        continue;
      }
      this.move(message, 'Processed');
      if (this.options.sendMs > 0) await sleep(this.options.sendMs);
      if (Math.random() < this.options.retryableFailureRate) {
        this.move(message, 'Failed', NO_SERVICE);
        continue;
      }
      if (Math.random() < this.options.failureRate) {
        this.move(message, 'Failed', SIMULATED_FAILURE);
        continue;
      }
      this.sent.push(message.id);
      // As the app: the SIM named by `simNumber`, else the phone's default (the first).
      const sim = message.simNumber ?? 1;
      this.options.sentLog.write({ id: message.id, to: message.recipients[0]?.phoneNumber ?? '', at: new Date().toISOString(), sim });
      this.move(message, 'Sent');
      if (!message.withDeliveryReport) continue;
      if (this.options.deliverMs === 0) this.move(message, 'Delivered');
      else {
        const timer = setTimeout(() => {
          this.deliveries.delete(timer);
          this.move(message, 'Delivered');
        }, this.options.deliverMs);
        this.deliveries.set(timer, message);
      }
    }
  }

  private move(message: HeldMessage, state: ProcessingState, error?: string): void {
    for (const recipient of message.recipients) {
      recipient.state = state;
      if (error !== undefined) recipient.error = error;
    }
    message.states[state] ??= this.now();
    this.report(message.id);
  }

  /** The app's derivation of a message's state from its recipients' (MessageWithRecipients). */
  private state(message: HeldMessage): ProcessingState {
    const states = message.recipients.map((r) => r.state);
    for (const state of ['Pending', 'Cancelling', 'Cancelled', 'Processed'] as const) if (states.includes(state)) return state;
    if (states.every((s) => s === 'Failed')) return 'Failed';
    if (states.every((s) => s === 'Delivered')) return 'Delivered';
    return 'Sent';
  }

  private snapshot(message: HeldMessage): MessageSnapshot {
    return {
      id: message.id,
      state: this.state(message),
      recipients: message.recipients.map((r) => ({ ...r })),
      states: { ...message.states },
    };
  }

  private now(): string {
    return appDate(new Date(), this.options.tzOffset);
  }

  private report(id: string, attempt = 0): void {
    this.patches.push({ id, attempt });
    this.pump();
  }

  private pump(): void {
    while (this.patching.size < PATCH_CONCURRENCY && this.patches.length > 0) {
      const { id, attempt } = this.patches.shift()!;
      const task: Promise<void> = this.patchOne(id, attempt).finally(() => {
        this.patching.delete(task);
        this.pump();
      });
      this.patching.add(task);
    }
  }

  private async patchOne(id: string, attempt: number): Promise<void> {
    const message = this.held.get(id);
    if (!message) return;
    try {
      const started = performance.now();
      await this.options.client.patchMessages([this.snapshot(message)]);
      this.options.onPatched?.(performance.now() - started);
    } catch (error) {
      if (this.closed || attempt >= PATCH_RETRIES) {
        this.options.log.warn({ err: error, id, attempt }, 'state report dropped');
        return;
      }
      this.options.log.warn({ err: error, id, attempt }, 'state report failed, will retry');
      // A worker waiting for its retry holds no thread.
      const timer = setTimeout(
        () => {
          this.retryTimers.delete(timer);
          this.report(id, attempt + 1);
        },
        backoff(attempt, { firstDelayMs: this.options.retryMs, maxDelayMs: 5 * 3600_000 }),
      );
      this.retryTimers.add(timer);
    }
  }
}

import type { Logger } from 'pino';
import type { ClaimedMessage, DeviceClient, Report } from '@smsgw/client';
import { AtError } from './at-channel.ts';
import { isModemUnavailable, ModemUnavailableError, type Modem } from './modem.ts';
import { buildSubmitParts } from './pdu-codec.ts';
import { ReportQueue } from './report-queue.ts';
import { describeStatus } from './sms-errors.ts';
import type { Submission, SubmissionState } from './submission-state.ts';

const CLAIM_LIMIT = 20;

/**
 * Sending: claims the device's messages, acknowledges them (`sending`) after writing them down as
 * held, submits each part once, reports `sent` when every part was accepted, and `delivered` or
 * `failed` from the status reports. Every report leaves at once (ReportQueue), also a status report
 * that comes while the agent is idle. Reports are idempotent, so a report that did not reach smsgw is
 * sent again; an entry leaves the state file once smsgw accepted its final report.
 */
export class Outbox {
  private readonly reports: ReportQueue;
  private work: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly client: DeviceClient,
    private readonly modem: Modem,
    private readonly state: SubmissionState,
    private readonly log: Logger,
    retryMaxMs: number,
  ) {
    this.reports = new ReportQueue({
      send: (batch) => client.report(batch),
      onAccepted: (batch) => state.remove(batch.filter((r) => r.status === 'delivered' || r.status === 'failed').map((r) => r.id)),
      log,
      retryMaxMs,
    });
    // After a restart: what was interrupted mid-submission fails (never sent twice); the rest is reported again.
    for (const entry of state.all()) {
      if (entry.phase === 'submitting')
        this.finish(entry, 'failed', 'The modem agent stopped while submitting this message; it may or may not have been sent and is not sent again.');
      else if (entry.phase === 'sent') {
        this.queueReport(entry.id, 'sent');
        this.settleReported(entry);
      } else if (entry.phase === 'final' && entry.outcome) this.queueReport(entry.id, entry.outcome.status, entry.outcome.error, entry.outcome.retryable);
    }
  }

  /** Claims and sends until nothing new is offered; a call during a round runs one more round. */
  kick(): Promise<void> {
    if (this.work) {
      this.again = true;
      return this.work;
    }
    this.work = (async () => {
      do {
        this.again = false;
        await this.round().catch((error: unknown) => this.log.warn({ reason: (error as Error).message }, 'sending round stopped'));
      } while (this.again);
    })().finally(() => (this.work = undefined));
    return this.work;
  }

  idle(): Promise<void> {
    return this.work ?? Promise.resolve();
  }

  /** A status report (+CDS or one read from memory) about a part this agent submitted. */
  onStatusReport(reference: number, status: number): void {
    const entry = this.state.byRef(reference);
    if (!entry) {
      this.log.info({ reference, status }, 'status report for no message of this agent, skipped');
      return;
    }
    const { outcome, text } = describeStatus(status);
    if (outcome === 'pending') this.log.info({ id: entry.id, reference, status: text }, 'status report: still trying');
    // A part's report can come while later parts are still being submitted: `submit` settles the message after its last part.
    else if (outcome === 'failed' && entry.phase === 'submitting') this.state.update(entry.id, { outcome: { status: 'failed', error: text } });
    else if (outcome === 'failed') this.finish(entry, 'failed', text);
    else {
      const deliveredRefs = [...new Set([...entry.deliveredRefs, reference])];
      this.state.update(entry.id, { deliveredRefs });
      if (entry.phase === 'sent') this.settleReported(entry);
    }
  }

  /** Sends the queued reports once more and no more after that: what does not get through is reported again after a restart. */
  async close(): Promise<void> {
    await this.idle();
    this.reports.close();
    await this.reports.flush();
  }

  private async round(): Promise<void> {
    await this.reports.flush();
    await this.submitHeld();
    for (;;) {
      if (!this.modem.ready) return;
      const offered = await this.client.claim({ limit: CLAIM_LIMIT });
      const fresh = offered.filter((m) => !this.state.get(m.id) && this.ownSim(m));
      // An offer of a message it holds means smsgw missed its report: say it again.
      for (const m of offered) if (this.state.get(m.id)) this.reportAgain(this.state.get(m.id)!);
      if (fresh.length === 0) return await this.reports.flush();
      await this.take(fresh);
      await this.submitHeld();
    }
  }

  /** A modem has one SIM: a message for another slot is reported failed at once, never sent (a repeat offer is answered again). */
  private ownSim(m: ClaimedMessage): boolean {
    if (m.sim_number === null || m.sim_number === 1) return true;
    this.queueReport(m.id, 'failed', `Not sent: the message asks for SIM ${m.sim_number}, and a modem has only SIM 1.`);
    return false;
  }

  /** Writes the messages down as held, then acknowledges them: from here on they are this agent's. */
  private async take(messages: ClaimedMessage[]): Promise<void> {
    this.state.hold(messages);
    for (const m of messages) this.queueReport(m.id, 'sending');
    await this.reports.flush();
    this.log.info({ count: messages.length }, 'messages taken');
  }

  private async submitHeld(): Promise<void> {
    for (const entry of this.state.all().filter((e) => e.phase === 'held')) {
      if (!this.modem.ready) return;
      if (Date.parse(entry.validUntil) <= Date.now()) {
        this.finish(entry, 'failed', 'Not sent: its valid_until passed before the modem could take it.');
        continue;
      }
      await this.submit(entry);
    }
    await this.reports.flush();
  }

  private async submit(entry: Submission): Promise<void> {
    const parts = buildSubmitParts(entry.to, entry.message, randomReference());
    this.state.update(entry.id, { phase: 'submitting', refs: [] });
    for (const [i, part] of parts.entries()) {
      const label = parts.length > 1 ? `part ${i + 1} of ${parts.length}: ` : '';
      try {
        const ref = await this.modem.submit(part);
        this.state.addRef(entry.id, ref);
      } catch (error) {
        if (error instanceof ModemUnavailableError && i === 0) {
          // Nothing was written: it stays held for the next round.
          this.state.update(entry.id, { phase: 'held' });
          return;
        }
        const reason =
          error instanceof AtError
            ? `Refused by the modem: ${label}${error.message}`
            : isModemUnavailable(error)
              ? `The modem stopped answering during ${label || 'the submission: '}${(error as Error).message}; not sent again, it may have been sent.`
              : `${label}${(error as Error).message}`;
        // A +CMS ERROR in answer to the first part's AT+CMGS: no part reached the network, so smsgw
        // may give the message to another device. Any later part's error, or a timeout, is final.
        this.finish(entry, 'failed', reason, error instanceof AtError && error.final.kind === 'cms' && i === 0);
        return;
      }
    }
    const sent = this.state.update(entry.id, { phase: 'sent' })!;
    this.queueReport(entry.id, 'sent');
    this.log.info({ id: entry.id, parts: parts.length, refs: sent.refs }, 'message sent');
    this.settleReported(sent);
  }

  /** Delivered once every part's report said so; failed as soon as one part's did. */
  private settleReported(entry: Submission): void {
    if (entry.outcome?.status === 'failed') this.finish(entry, 'failed', entry.outcome.error);
    else if (entry.refs.length > 0 && entry.refs.every((ref) => entry.deliveredRefs.includes(ref))) this.finish(entry, 'delivered');
  }

  private finish(entry: Submission, status: 'delivered' | 'failed', error?: string, retryable = false): void {
    this.state.update(entry.id, { phase: 'final', outcome: { status, ...(error && { error }), ...(retryable && { retryable }) } });
    this.queueReport(entry.id, status, error, retryable);
    this.log.info({ id: entry.id, status, error }, `message ${status}`);
  }

  private reportAgain(entry: Submission): void {
    if (entry.phase === 'final' && entry.outcome) this.queueReport(entry.id, entry.outcome.status, entry.outcome.error, entry.outcome.retryable);
    else this.queueReport(entry.id, entry.phase === 'sent' ? 'sent' : 'sending');
  }

  private queueReport(id: string, status: Report['status'], error?: string, retryable = false): void {
    this.reports.add({ id, status, at: new Date().toISOString(), ...(error && { error }), ...(retryable && { retryable }) });
  }
}

// The 8-bit concatenation reference: random, so that parts of two messages to one number do not mix.
function randomReference(): number {
  return Math.floor(Math.random() * 256);
}

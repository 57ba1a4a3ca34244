import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { DeviceClient, InboundSms } from '@smsgw/client';
import type { StoredPdu } from './at-lines.ts';
import type { Modem } from './modem.ts';
import { decodePdu, type DeliveredPart } from './pdu-codec.ts';

interface Slot {
  index: number;
  part: DeliveredPart;
  /** Other slots holding the same part (the network may deliver a part twice): freed with it. */
  duplicates?: number[];
}

/** A complete SMS (one slot, or every part of a concatenated one) waiting to reach smsgw. */
interface Ready {
  sms: InboundSms;
  indexes: number[];
}

/**
 * Receiving: reads each stored SMS (+CMTI → AT+CMGR, or the listing at start), joins
 * concatenated parts, forwards complete messages to `/api/v1/device/inbound` and deletes their
 * slots only after smsgw answered 2xx. A message that smsgw did not take stays on the SIM and is
 * forwarded again on the next retry; its id, derived from its content, makes a repeat count once.
 * An unreadable slot is logged and left alone. Status reports stored in memory (+CDSI) go to
 * `onStatusReport` and are deleted.
 */
export class Inbox {
  // Parts of concatenated SMS, by sender and reference, until all are read.
  private readonly partial = new Map<string, Map<number, Slot>>();
  private readonly waiting = new Map<string, Ready>();
  private readonly known = new Set<number>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: DeviceClient,
    private readonly modem: Modem,
    private readonly log: Logger,
    private readonly onStatusReport: (reference: number, status: number) => void,
  ) {}

  /** Everything on the SIM (at start and after every reconnect). */
  readStored(): Promise<void> {
    return this.serialised(async () => {
      const { messages, skipped } = await this.modem.listStored();
      for (const line of skipped) this.log.warn({ line }, 'unreadable line in the message listing, skipped');
      this.partial.clear();
      this.known.clear();
      for (const stored of messages) await this.take(stored);
      await this.forwardWaiting();
    });
  }

  /** A +CMTI or +CDSI: the slot `index` holds a new message. */
  readIndex(index: number): Promise<void> {
    return this.serialised(async () => {
      if (this.known.has(index)) return;
      const pdu = await this.modem.read(index);
      if (pdu === undefined) {
        this.log.warn({ index }, 'announced slot holds no readable message, skipped');
        return;
      }
      await this.take({ index, pdu });
      await this.forwardWaiting();
    });
  }

  /** Forwards what smsgw has not taken yet (after it was unreachable). */
  retry(): Promise<void> {
    return this.serialised(() => this.forwardWaiting());
  }

  private serialised(run: () => Promise<void>): Promise<void> {
    const next = this.chain
      .then(run)
      .catch((error: unknown) => this.log.warn({ reason: (error as Error).message }, 'reading messages stopped; trying again later'));
    this.chain = next;
    return next;
  }

  private async take({ index, pdu }: StoredPdu): Promise<void> {
    this.known.add(index);
    const decoded = decodePdu(pdu);
    if (decoded instanceof Error) {
      this.log.warn({ index, pdu, reason: decoded.message }, 'unreadable message left on the SIM, skipped');
      return;
    }
    if (decoded.kind === 'report') {
      this.onStatusReport(decoded.reference, decoded.status);
      await this.modem.delete(index);
      return;
    }
    const { part } = decoded;
    if (!part.concat) return this.ready([{ index, part }]);
    const key = `${part.from}|${part.concat.reference}|${part.concat.total}`;
    const parts = this.partial.get(key) ?? new Map<number, Slot>();
    this.partial.set(key, parts);
    const existing = parts.get(part.concat.current);
    if (existing) {
      this.log.info({ index, duplicateOf: existing.index }, 'the same part twice; both slots freed with the message');
      existing.duplicates = [...(existing.duplicates ?? []), index];
      return;
    }
    parts.set(part.concat.current, { index, part });
    if (parts.size < part.concat.total) return;
    this.partial.delete(key);
    this.ready([...parts.values()].sort((a, b) => a.part.concat!.current - b.part.concat!.current));
  }

  private ready(slots: Slot[]): void {
    const first = slots[0]!.part;
    const message = slots.map((slot) => slot.part.text).join('');
    const receivedAt = first.receivedAt.toISOString();
    const id = `modem-${createHash('sha256')
      .update(`${first.from}\n${receivedAt}\n${first.concat?.reference ?? ''}\n${message}`)
      .digest('hex')
      .slice(0, 32)}`;
    const waiting = this.waiting.get(id);
    const indexes = slots.flatMap((slot) => [slot.index, ...(slot.duplicates ?? [])]);
    if (waiting) waiting.indexes.push(...indexes.filter((i) => !waiting.indexes.includes(i)));
    else this.waiting.set(id, { sms: { id, from: first.from, message, received_at: receivedAt }, indexes });
  }

  private async forwardWaiting(): Promise<void> {
    if (this.waiting.size === 0) return;
    const batch = [...this.waiting.values()];
    try {
      const result = await this.client.inbound(batch.map((r) => r.sms));
      this.log.info({ ...result }, 'incoming SMS forwarded');
    } catch (error) {
      this.log.warn({ count: batch.length, reason: (error as Error).message }, 'incoming SMS not forwarded; kept on the SIM');
      return;
    }
    for (const ready of batch) {
      for (const index of ready.indexes) {
        await this.modem.delete(index);
        this.known.delete(index);
      }
      this.waiting.delete(ready.sms.id!);
    }
  }
}

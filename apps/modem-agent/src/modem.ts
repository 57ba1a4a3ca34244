import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { HeartbeatHealth } from '@smsgw/client';
import { AtChannel, AtError, AtTimeoutError } from './at-channel.ts';
import { parseListing, parseRead, type StoredPdu, type Unsolicited } from './at-lines.ts';
import { cregToNetwork, csqToDbm } from './network-readings.ts';
import type { SubmitPart } from './pdu-codec.ts';

export interface ModemOptions {
  port: string;
  baud: number;
  pin?: string;
  commandTimeoutMs: number;
  sendTimeoutMs: number;
  retryMaxMs: number;
  log: Logger;
  onUnsolicited(code: Unsolicited): void;
  /** Called after each successful initialisation (the first one and every one after a reconnect). */
  onReady(): void;
}

/** The modem is not open and initialised now; nothing was written to it. */
export class ModemUnavailableError extends Error {
  override name = 'ModemUnavailableError';
}

/**
 * A GSM modem on a serial port, in PDU mode: opens the port, initialises the modem, and does so
 * again with a growing pause whenever the port closes (unplugged) or a command goes unanswered.
 */
export class Modem {
  private channel: AtChannel | undefined;
  // The open port, also while it is being initialised (stop closes it at once).
  private open: AtChannel | undefined;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  // A refused PIN is never tried again by this process: three wrong ones block the SIM.
  private pinRefused = false;

  constructor(private readonly options: ModemOptions) {}

  get ready(): boolean {
    return this.channel !== undefined;
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.open?.close();
    await this.running;
  }

  /** Submits each part (AT+CMGS) and resolves with their message references. */
  async submit(part: SubmitPart): Promise<number> {
    return this.use().submit(part.pdu, part.tpduLength, this.options.commandTimeoutMs, this.options.sendTimeoutMs);
  }

  /** Every message stored in the preferred memory (AT+CMGL=4: read and unread). */
  async listStored(): Promise<{ messages: StoredPdu[]; skipped: string[] }> {
    return parseListing(await this.command('AT+CMGL=4'));
  }

  /** The PDU at `index`, or undefined when the slot is empty. */
  async read(index: number): Promise<string | undefined> {
    return parseRead(await this.command(`AT+CMGR=${index}`));
  }

  async delete(index: number): Promise<void> {
    await this.command(`AT+CMGD=${index}`);
  }

  /** A plain `AT`: a modem that does not answer is caught by the timeout and opened again. */
  async ping(): Promise<void> {
    await this.command('AT');
  }

  /**
   * What the modem knows of its network, for the heartbeat: the signal (AT+CSQ), the registration
   * (AT+CREG?) and, before both, the SIM: one that is not READY (absent, locked) is `no_sim`.
   */
  async networkHealth(): Promise<Pick<HeartbeatHealth, 'signal_dbm' | 'network'>> {
    const value = (lines: string[], name: string) => lines.map((line) => new RegExp(`^\\+${name}:\\s*(.+)$`).exec(line)?.[1]?.trim()).find(Boolean);
    // +CME ERROR: 10 is "SIM not inserted": the answer of a modem without a SIM.
    const sim = await this.command('AT+CPIN?').then(
      (lines) => value(lines, 'CPIN'),
      (error: unknown) => {
        if (error instanceof AtError) return undefined;
        throw error;
      },
    );
    const rssi = Number(value(await this.command('AT+CSQ'), 'CSQ')?.split(',')[0]);
    if (sim !== 'READY') return { signal_dbm: csqToDbm(rssi), network: 'no_sim' };
    const stat = Number(value(await this.command('AT+CREG?'), 'CREG')?.split(',')[1]);
    return { signal_dbm: csqToDbm(rssi), network: cregToNetwork(stat) };
  }

  command(command: string): Promise<string[]> {
    return this.use().command(command, this.options.commandTimeoutMs);
  }

  private use(): AtChannel {
    if (!this.channel) throw new ModemUnavailableError('the modem is not ready');
    return this.channel;
  }

  private async run(): Promise<void> {
    const { log } = this.options;
    const signal = this.stopping.signal;
    let pause = 250;
    while (!signal.aborted) {
      let channel: AtChannel | undefined;
      try {
        channel = await AtChannel.open(this.options.port, this.options.baud, log, (code) => this.options.onUnsolicited(code));
        this.open = channel;
        if (signal.aborted) break;
        await this.initialise(channel);
        log.info({ port: this.options.port }, 'modem ready');
        pause = 250;
        this.channel = channel;
        this.options.onReady();
        const reason = await Promise.race([
          channel.closed,
          new Promise<Error>((resolve) => signal.addEventListener('abort', () => resolve(new Error('stopping')), { once: true })),
        ]);
        if (!signal.aborted) log.warn({ reason: reason.message }, 'modem lost; opening it again');
      } catch (error) {
        if (!signal.aborted) log.warn({ port: this.options.port, reason: (error as Error).message }, 'modem not ready');
      } finally {
        this.channel = this.open = undefined;
        await channel?.close();
      }
      if (signal.aborted) break;
      await sleep(pause, undefined, { signal }).catch(() => undefined);
      pause = Math.min(pause * 2, this.options.retryMaxMs);
    }
  }

  private async initialise(channel: AtChannel): Promise<void> {
    const { log, commandTimeoutMs } = this.options;
    const at = (command: string) => channel.command(command, commandTimeoutMs);
    await at('AT');
    await at('ATE0');
    await at('AT+CMEE=1');
    await this.unlockSim(at);
    await at('AT+CMGF=0');
    // Phase 2 service: +CDS need no +CNMA acknowledgement. Older modems know only this one.
    await at('AT+CSMS=0').catch((error: unknown) => {
      if (!(error instanceof AtError)) throw error;
      log.debug({ reason: error.message }, 'AT+CSMS=0 refused; keeping the modem’s setting');
    });
    // New SMS as +CMTI (stored, read by index), status reports as +CDS (not stored).
    await at('AT+CNMI=2,1,0,1,0');
  }

  private async unlockSim(at: (command: string) => Promise<string[]>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const lines = await at('AT+CPIN?');
      const state = lines.map((line) => /^\+CPIN:\s*(.+)$/.exec(line)?.[1]?.trim()).find(Boolean);
      if (state === 'READY') return;
      if (state !== 'SIM PIN') throw new Error(`SIM not usable: ${state ?? 'no +CPIN answer'}`);
      // Entering a wrong PIN twice more would block the SIM: try it once per start.
      if (attempt > 0) throw new Error('SIM still asks for its PIN after MODEM_PIN was entered');
      if (!this.options.pin) throw new Error('the SIM asks for a PIN: set MODEM_PIN (or --pin)');
      if (this.pinRefused) throw new Error('the SIM refused MODEM_PIN; not trying it again (check the PIN, then restart)');
      await at(`AT+CPIN="${this.options.pin}"`).catch((error: unknown) => {
        if (error instanceof AtError) this.pinRefused = true;
        throw error;
      });
      // Some modems take a moment before the SIM reports READY.
      await sleep(200);
    }
  }
}

export function isModemUnavailable(error: unknown): boolean {
  return error instanceof ModemUnavailableError || error instanceof AtTimeoutError;
}

import { SerialPort } from 'serialport';
import type { Logger } from 'pino';
import { AtLineSplitter, type Final, type Unsolicited } from './at-lines.ts';
import { describeFinal } from './sms-errors.ts';

/** A command the modem answered with ERROR, +CME ERROR or +CMS ERROR; `message` says it in words. */
export class AtError extends Error {
  override name = 'AtError';
  constructor(
    readonly command: string,
    readonly final: Final,
  ) {
    super(describeFinal(final));
  }
}

/** No final result within the timeout, or the port closed while waiting: the channel is unusable. */
export class AtTimeoutError extends Error {
  override name = 'AtTimeoutError';
}

interface Pending {
  command: string;
  lines: string[];
  onPrompt?: () => void;
  settle(error: Error | undefined, lines: string[]): void;
}

/**
 * One open serial port to a modem: AT commands one at a time, each with a timeout, their
 * information lines collected until the final result; unsolicited codes (+CMTI, +CDS, +CDSI)
 * handed to `onUnsolicited` whenever they come, also in the middle of a command's answer; any
 * other line that no command waits for is logged and dropped. A timeout or a closed port makes
 * the channel dead: the owner opens a new one and initialises the modem again.
 */
export class AtChannel {
  private readonly splitter = new AtLineSplitter();
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private dead: Error | undefined;
  /** Resolves with the reason once the port is closed or the channel gave up on the modem. */
  readonly closed: Promise<Error>;
  private markClosed!: (reason: Error) => void;

  private constructor(
    private readonly port: SerialPort,
    private readonly log: Logger,
    private readonly onUnsolicited: (code: Unsolicited) => void,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    port.on('data', (chunk: Buffer) => this.onData(chunk.toString('latin1')));
    port.on('close', (error: Error | null) => this.die(error ?? new Error('serial port closed')));
    port.on('error', (error: Error) => this.die(error));
  }

  static open(path: string, baudRate: number, log: Logger, onUnsolicited: (code: Unsolicited) => void): Promise<AtChannel> {
    const port = new SerialPort({ path, baudRate, autoOpen: false });
    return new Promise((resolve, reject) => {
      port.open((error) => (error ? reject(error) : resolve(new AtChannel(port, log, onUnsolicited))));
    });
  }

  /** Sends `AT…` and resolves with its information lines on OK; rejects with AtError or AtTimeoutError. */
  command(command: string, timeoutMs: number): Promise<string[]> {
    return this.serialised(() => this.exchange(command, timeoutMs));
  }

  /**
   * AT+CMGS in PDU mode: the command, the `> ` prompt, the PDU and Ctrl-Z, then `+CMGS: <mr>`.
   * Resolves with the message reference the modem gave the submission.
   */
  submit(pdu: string, tpduLength: number, promptTimeoutMs: number, sendTimeoutMs: number): Promise<number> {
    return this.serialised(async () => {
      const lines = await this.exchange(`AT+CMGS=${tpduLength}`, promptTimeoutMs, { pdu, sendTimeoutMs });
      const mr = lines.map((line) => /^\+CMGS:\s*(\d+)/.exec(line)).find(Boolean);
      if (!mr) throw new AtError(`AT+CMGS=${tpduLength}`, { kind: 'error' });
      return Number(mr[1]);
    });
  }

  /** Closes the port (idempotent). */
  async close(): Promise<void> {
    this.die(new Error('closed by the agent'));
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }

  private serialised<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private exchange(command: string, timeoutMs: number, pdu?: { pdu: string; sendTimeoutMs: number }): Promise<string[]> {
    if (this.dead) return Promise.reject(new AtTimeoutError(`modem unavailable: ${this.dead.message}`));
    return new Promise((resolve, reject) => {
      let timer = setTimeout(() => this.giveUp(command, timeoutMs), timeoutMs);
      const pending: Pending = {
        command,
        lines: [],
        settle: (error, lines) => {
          clearTimeout(timer);
          this.pending = undefined;
          if (error) reject(error);
          else resolve(lines);
        },
      };
      if (pdu) {
        pending.onPrompt = () => {
          clearTimeout(timer);
          timer = setTimeout(() => this.giveUp(command, pdu.sendTimeoutMs), pdu.sendTimeoutMs);
          this.port.write(`${pdu.pdu}\x1a`);
        };
      }
      this.pending = pending;
      this.log.debug({ command }, 'AT command');
      this.port.write(`${command}\r`);
    });
  }

  private giveUp(command: string, timeoutMs: number): void {
    this.die(new AtTimeoutError(`no answer to ${command} within ${timeoutMs} ms`));
  }

  private die(reason: Error): void {
    if (this.dead) return;
    this.dead = reason;
    const pending = this.pending;
    if (pending) pending.settle(reason instanceof AtTimeoutError ? reason : new AtTimeoutError(`modem unavailable: ${reason.message}`), []);
    this.markClosed(reason);
    if (this.port.isOpen) this.port.close(() => undefined);
  }

  private onData(chunk: string): void {
    for (const piece of this.splitter.push(chunk)) {
      const pending = this.pending;
      switch (piece.type) {
        case 'unsolicited':
          this.onUnsolicited(piece.code);
          break;
        case 'prompt':
          if (pending?.onPrompt) {
            const write = pending.onPrompt;
            pending.onPrompt = undefined;
            write();
          } else this.log.warn('prompt that no command asked for, skipped');
          break;
        case 'final':
          if (!pending) this.log.warn({ line: piece.line }, 'final result that no command waits for, skipped');
          else if (piece.final.kind === 'ok') pending.settle(undefined, pending.lines);
          else pending.settle(new AtError(pending.command, piece.final), pending.lines);
          break;
        case 'line':
          // Echo (before ATE0 takes effect) is the command itself.
          if (pending && piece.line !== pending.command) pending.lines.push(piece.line);
          else if (!pending) this.log.warn({ line: piece.line }, 'unexpected line from the modem, skipped');
          break;
      }
    }
  }
}

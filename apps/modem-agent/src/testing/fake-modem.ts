import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Deliver, parse, Submit, utils } from 'node-pdu';
import { SerialPort } from 'serialport';

/**
 * A pair of pseudo-terminals joined by socat: `modem` for the fake modem, `agent` for the agent.
 * Stopping socat makes both vanish, as an unplugged USB modem does; `start` again brings them back
 * under the same paths.
 */
export class PtyPair {
  readonly modem: string;
  readonly agent: string;
  private socat: ChildProcess | undefined;

  constructor(dir: string) {
    this.modem = join(dir, 'modem');
    this.agent = join(dir, 'agent');
  }

  async start(): Promise<void> {
    this.socat = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${this.modem}`, `pty,raw,echo=0,link=${this.agent}`], { stdio: 'ignore' });
    for (let i = 0; i < 200 && !(existsSync(this.modem) && existsSync(this.agent)); i++) await sleep(10);
    if (!existsSync(this.agent)) throw new Error('socat made no pseudo-terminals');
  }

  async stop(): Promise<void> {
    const socat = this.socat;
    this.socat = undefined;
    if (!socat || socat.exitCode !== null) return;
    const exited = new Promise((resolve) => socat.once('exit', resolve));
    socat.kill('SIGTERM');
    await exited;
  }
}

export interface FakeModemOptions {
  /** The SIM asks for this PIN before it is READY. */
  pin?: string;
  /**
   * The network's part: each accepted submission gets a status report saying delivered, this many ms
   * after its +CMGS (0: in the same write, so both reach the agent in one read).
   */
  deliverAfterMs?: number;
}

/**
 * A scripted GSM modem on the modem side of a PtyPair, answering as a real one does in PDU mode:
 * echo until ATE0, OK/ERROR, the `> ` prompt after AT+CMGS and `+CMGS: <mr>` after the Ctrl-Z
 * terminated PDU, a SIM memory listed by AT+CMGL and read by AT+CMGR, unsolicited +CMTI and +CDS.
 */
export class FakeModem {
  /** Every command received, in order. */
  readonly commands: string[] = [];
  /** Every PDU submitted with AT+CMGS, with the reference it was given. */
  readonly submitted: { pdu: string; length: number; mr: number }[] = [];
  /** The SIM memory: slot → PDU. */
  readonly stored = new Map<number, string>();
  /** Answer the next AT+CMGS PDU with `+CMS ERROR: <code>`. */
  failNextSubmit: number | undefined;
  /** When true, the modem reads and answers nothing. */
  silent = false;
  /** AT+CSQ's RSSI (0-31, 99 unknown) and AT+CREG?'s registration status (1 home, 2 searching, 5 roaming, …). */
  rssi = 21;
  registration = 1;
  /** When true, there is no SIM: AT+CPIN? answers +CME ERROR: 10 ("SIM not inserted"). */
  noSim = false;
  /** When true, submissions are taken but their +CMGS answer waits for `release()` (a slow network). */
  holding = false;
  private held: number[] = [];
  private echo = true;
  private pinOk: boolean;
  private nextMr = 1;
  private input = '';
  private awaitingPdu: number | undefined;

  private constructor(
    private readonly port: SerialPort,
    private readonly options: FakeModemOptions,
  ) {
    this.pinOk = !options.pin;
    port.on('data', (chunk: Buffer) => this.onData(chunk.toString('latin1')));
    port.on('error', () => undefined);
  }

  static async open(path: string, options: FakeModemOptions = {}): Promise<FakeModem> {
    const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    return new FakeModem(port, options);
  }

  async close(): Promise<void> {
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }

  /** An incoming SMS: each part of `text` from `from` is stored and announced with +CMTI. */
  receive(from: string, text: string): number[] {
    return new Deliver(from, text).getPartStrings().map((pdu) => this.store(pdu, true));
  }

  /** Stores a PDU in the next free slot; announces it with +CMTI unless `announce` is false. */
  store(pdu: string, announce: boolean): number {
    let index = 0;
    while (this.stored.has(index)) index++;
    this.stored.set(index, pdu);
    if (announce) this.write(`\r\n+CMTI: "SM",${index}\r\n`);
    return index;
  }

  /** A status report for the submission with reference `mr` (TP-Status `status`: 0 delivered). */
  statusReport(mr: number, status: number, to = '+447700900000'): void {
    this.write(cds(mr, status, to));
  }

  /** Anything, as a broken or chatty modem writes it. */
  write(text: string): void {
    if (this.port.isOpen) this.port.write(text);
  }

  private onData(chunk: string): void {
    if (this.silent) return;
    this.input += chunk;
    for (;;) {
      if (this.awaitingPdu !== undefined) {
        const end = this.input.indexOf('\x1a');
        if (end < 0) return;
        const pdu = this.input.slice(0, end).trim();
        this.input = this.input.slice(end + 1);
        this.submit(pdu, this.awaitingPdu);
        this.awaitingPdu = undefined;
        continue;
      }
      const end = this.input.indexOf('\r');
      if (end < 0) return;
      const command = this.input.slice(0, end).replace(/^\n/, '').trim();
      this.input = this.input.slice(end + 1);
      if (command) this.answer(command);
    }
  }

  private submit(pdu: string, length: number): void {
    if (this.failNextSubmit !== undefined) {
      const code = this.failNextSubmit;
      this.failNextSubmit = undefined;
      return this.write(`\r\n+CMS ERROR: ${code}\r\n`);
    }
    const mr = this.nextMr;
    this.nextMr = (this.nextMr + 1) % 256;
    this.submitted.push({ pdu, length, mr });
    if (this.holding) this.held.push(mr);
    else this.accept(mr);
  }

  /** Answers the submissions held so far and stops holding. */
  release(): void {
    this.holding = false;
    for (const mr of this.held.splice(0)) this.accept(mr);
  }

  private accept(mr: number): void {
    const accepted = `\r\n+CMGS: ${mr}\r\n\r\nOK\r\n`;
    const { deliverAfterMs } = this.options;
    if (deliverAfterMs === 0) return this.write(`${accepted}${cds(mr, 0)}`);
    this.write(accepted);
    if (deliverAfterMs !== undefined) setTimeout(() => this.statusReport(mr, 0), deliverAfterMs).unref();
  }

  private answer(command: string): void {
    this.commands.push(command);
    if (this.echo) this.write(`${command}\r`);
    const ok = (lines: string[] = []) => this.write(`${lines.map((l) => `\r\n${l}`).join('')}\r\n\r\nOK\r\n`.replace(/^\r\n\r\n/, '\r\n'));
    const upper = command.toUpperCase();
    let match: RegExpExecArray | null;
    if (['AT', 'AT+CMEE=1', 'AT+CMGF=0'].includes(upper) || upper.startsWith('AT+CNMI=')) return ok();
    if (upper === 'ATE0') {
      this.echo = false;
      return ok();
    }
    if (upper === 'AT+CSMS=0') return ok(['+CSMS: 1,1,1']);
    // The radio answers without a SIM: a signal, and no registration until the SIM is usable.
    if (upper === 'AT+CSQ') return ok([`+CSQ: ${this.rssi},99`]);
    if (upper === 'AT+CREG?') return ok([`+CREG: 0,${this.pinOk && !this.noSim ? this.registration : 0}`]);
    if (this.noSim) return this.write('\r\n+CME ERROR: 10\r\n');
    if (upper === 'AT+CPIN?') return ok([`+CPIN: ${this.pinOk ? 'READY' : 'SIM PIN'}`]);
    if ((match = /^AT\+CPIN="(\d+)"$/.exec(upper))) {
      if (match[1] !== this.options.pin) return this.write('\r\n+CME ERROR: 16\r\n');
      this.pinOk = true;
      return ok();
    }
    if (!this.pinOk) return this.write('\r\n+CME ERROR: 11\r\n');
    if (upper === 'AT+CMGL=4') return ok([...this.stored].flatMap(([index, pdu]) => [`+CMGL: ${index},0,,${pdu.length / 2 - 1}`, pdu]));
    if ((match = /^AT\+CMGR=(\d+)$/.exec(upper))) {
      const pdu = this.stored.get(Number(match[1]));
      return ok(pdu ? [`+CMGR: 0,,${pdu.length / 2 - 1}`, pdu] : []);
    }
    if ((match = /^AT\+CMGD=(\d+)$/.exec(upper))) {
      this.stored.delete(Number(match[1]));
      return ok();
    }
    if ((match = /^AT\+CMGS=(\d+)$/.exec(upper))) {
      this.awaitingPdu = Number(match[1]);
      return this.write('\r\n> ');
    }
    this.write('\r\nERROR\r\n');
  }
}

/** What a PDU given to AT+CMGS says, decoded with node-pdu: destination, text, and which part it is (1 of 1 when single). */
export function readSubmit(pdu: string): { to: string; text: string; part: number; parts: number; statusReport: boolean } {
  const parsed = parse(pdu);
  if (!(parsed instanceof Submit)) throw new Error('not an SMS-SUBMIT');
  const header = parsed.data.parts[0]?.header;
  return {
    to: `+${parsed.address.phone}`,
    text: parsed.data.getText(),
    part: header?.getCurrent() ?? 1,
    parts: header?.getSegments() ?? 1,
    statusReport: parsed.type.statusReportRequest === 1,
  };
}

/** An unsolicited +CDS: the status report (SMS-STATUS-REPORT) for the submission with reference `mr`. */
function cds(mr: number, status: number, to = '+447700900000'): string {
  const now = new utils.SCTS(new Date()).toString();
  const tpdu = `06${hex(mr)}${new utils.SCA(true).setPhone(to).toString()}${now}${now}${hex(status)}`;
  return `\r\n+CDS: ${tpdu.length / 2}\r\n00${tpdu}\r\n`;
}

function hex(n: number): string {
  return n.toString(16).padStart(2, '0').toUpperCase();
}

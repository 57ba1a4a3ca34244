/**
 * What a modem writes, cut into the pieces the AT layer acts on (3GPP 27.007 and 27.005): final
 * result codes, unsolicited result codes, the `> ` prompt of AT+CMGS, and information lines.
 * Pure: no I/O, so the rules are tested on their own.
 */
export type Final = { kind: 'ok' } | { kind: 'error' } | { kind: 'cme' | 'cms'; code: number; text: string };

export type Unsolicited = { kind: 'cmti'; memory: string; index: number } | { kind: 'cdsi'; memory: string; index: number } | { kind: 'cds'; pdu: string };

export type Piece =
  | { type: 'final'; final: Final; line: string }
  | { type: 'unsolicited'; code: Unsolicited }
  | { type: 'prompt' }
  | { type: 'line'; line: string };

const STORED = /^\+(CMTI|CDSI):\s*"([^"]*)",\s*(\d+)\s*$/;
const ERROR_CODE = /^\+(CME|CMS) ERROR:\s*(.+)$/;

/** Turns the byte stream of a modem into pieces; `push` returns those completed by a chunk. */
export class AtLineSplitter {
  private buffer = '';
  // +CDS: <length> is followed by the PDU on its own line.
  private awaitingCdsPdu = false;

  push(chunk: string): Piece[] {
    this.buffer += chunk;
    const pieces: Piece[] = [];
    let cut: RegExpExecArray | null;
    while ((cut = /\r\n|\r|\n/.exec(this.buffer)) !== null) {
      const line = this.buffer.slice(0, cut.index).trim();
      this.buffer = this.buffer.slice(cut.index + cut[0].length);
      if (line === '') continue;
      const piece = this.classify(line);
      if (piece) pieces.push(piece);
    }
    // The prompt ends with no line break.
    if (this.buffer.trim() === '>') {
      this.buffer = '';
      pieces.push({ type: 'prompt' });
    }
    return pieces;
  }

  private classify(line: string): Piece | undefined {
    if (this.awaitingCdsPdu) {
      this.awaitingCdsPdu = false;
      return { type: 'unsolicited', code: { kind: 'cds', pdu: line } };
    }
    // A prompt that a line break followed (some modems write ">\r\n").
    if (line === '>') return { type: 'prompt' };
    const final = parseFinal(line);
    if (final) return { type: 'final', final, line };
    const stored = STORED.exec(line);
    if (stored) {
      const kind = stored[1] === 'CMTI' ? 'cmti' : 'cdsi';
      return { type: 'unsolicited', code: { kind, memory: stored[2]!, index: Number(stored[3]) } };
    }
    if (/^\+CDS:\s*\d+\s*$/.test(line)) {
      this.awaitingCdsPdu = true;
      return undefined;
    }
    return { type: 'line', line };
  }
}

export function parseFinal(line: string): Final | undefined {
  if (line === 'OK') return { kind: 'ok' };
  if (line === 'ERROR') return { kind: 'error' };
  const coded = ERROR_CODE.exec(line);
  if (!coded) return undefined;
  const kind = coded[1] === 'CME' ? 'cme' : 'cms';
  const value = coded[2]!.trim();
  // Numeric after AT+CMEE=1; some modems answer in words whatever the setting.
  return /^\d+$/.test(value) ? { kind, code: Number(value), text: value } : { kind, code: -1, text: value };
}

/** `+CMGL: <index>,<stat>,[<alpha>],<length>` followed by the PDU line, as listed or read. */
export interface StoredPdu {
  index: number;
  pdu: string;
}

/**
 * The PDUs of an AT+CMGL answer. A header not followed by a hexadecimal line, and any other line,
 * is skipped: the caller logs what it dropped.
 */
export function parseListing(lines: string[]): { messages: StoredPdu[]; skipped: string[] } {
  const messages: StoredPdu[] = [];
  const skipped: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const header = /^\+CMGL:\s*(\d+),/.exec(lines[i]!);
    const next = lines[i + 1];
    if (header && next !== undefined && isHex(next)) {
      messages.push({ index: Number(header[1]), pdu: next });
      i++;
    } else skipped.push(lines[i]!);
  }
  return { messages, skipped };
}

/** The PDU of an AT+CMGR answer (`+CMGR: <stat>,[<alpha>],<length>` then the PDU), if there is one. */
export function parseRead(lines: string[]): string | undefined {
  const at = lines.findIndex((line) => line.startsWith('+CMGR:'));
  const pdu = at >= 0 ? lines[at + 1] : undefined;
  return pdu !== undefined && isHex(pdu) ? pdu : undefined;
}

export function isHex(line: string): boolean {
  return line.length > 0 && line.length % 2 === 0 && /^[0-9A-Fa-f]+$/.test(line);
}

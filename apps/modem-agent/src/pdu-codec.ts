import { Deliver, Report, Submit, parse, utils } from 'node-pdu';
import { splitSegments } from '@smsgw/core';

/**
 * SMS PDUs through node-pdu (3GPP 23.040). Sending splits with smsgw's own segment counter, so
 * that the parts and the alphabet are the carrier's count that smsgw recorded (node-pdu's own
 * splitting uses other sizes and a 16-bit reference), and builds each part with node-pdu: the
 * header of a Submit, a concatenation header with an 8-bit reference, the user data encoded by
 * its helpers.
 */
export interface SubmitPart {
  /** The PDU as written after AT+CMGS, with the (empty) service centre address in front. */
  pdu: string;
  /** AT+CMGS's length: the TPDU's octets, without the service centre address. */
  tpduLength: number;
}

export function buildSubmitParts(to: string, text: string, reference: number): SubmitPart[] {
  const { encoding, parts } = splitSegments(text);
  const concatenated = parts.length > 1;
  const dcs = new utils.DCS();
  if (encoding === 'UCS-2') dcs.setTextAlphabet(utils.DCS.ALPHABET_UCS2);
  const submit = new Submit(to, '', {
    dataCodingScheme: dcs,
    type: new utils.SubmitType({ statusReportRequest: 1, userDataHeader: concatenated ? 1 : 0 }),
  });
  return parts.map((part, i) => {
    const header = concatenated
      ? new utils.Header([{ type: utils.Header.IE_CONCAT_8BIT_REF, dataHex: hex(reference & 0xff) + hex(parts.length) + hex(i + 1) }])
      : undefined;
    // UDH of 6 octets: the septets start after one fill bit, and the length counts 7 septets for it.
    const headerOctets = header ? 1 + header.getSize() : 0;
    let size: number;
    let data: string;
    if (encoding === 'GSM-7') {
      const fillBits = header ? 7 - ((headerOctets * 8) % 7) : 0;
      const encoded = utils.Helper.encode7Bit(part, fillBits % 7);
      data = encoded.result;
      size = (header ? encoded.length - (fillBits % 7 ? 1 : 0) : encoded.length) + Math.ceil((headerOctets * 8) / 7);
    } else {
      const encoded = utils.Helper.encode16Bit(part);
      data = encoded.result;
      size = encoded.length + headerOctets;
    }
    const pdu = new utils.Part(data, size, part, header).toString(submit);
    const scaOctets = parseInt(pdu.slice(0, 2), 16) + 1;
    return { pdu, tpduLength: pdu.length / 2 - scaOctets };
  });
}

export interface DeliveredPart {
  from: string;
  text: string;
  receivedAt: Date;
  /** Set for one part of a concatenated SMS. */
  concat?: { reference: number; total: number; current: number };
}

export type DecodedPdu = { kind: 'deliver'; part: DeliveredPart } | { kind: 'report'; reference: number; status: number };

/** A PDU read from the modem (with its service centre address), or an Error saying why it is unreadable. */
export function decodePdu(pdu: string): DecodedPdu | Error {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(pdu);
  } catch (error) {
    return new Error(`malformed PDU: ${(error as Error).message}`);
  }
  if (parsed instanceof Report) return { kind: 'report', reference: parsed.reference, status: parsed.status };
  if (!(parsed instanceof Deliver)) return new Error('not an incoming SMS or a status report');
  try {
    const header = parsed.data.parts[0]?.header;
    const total = header?.getSegments() ?? 1;
    const concat = header && total > 1 ? { reference: header.getPointer() ?? 0, total, current: header.getCurrent() ?? 1 } : undefined;
    const receivedAt = new Date(parsed.serviceCenterTimeStamp.getIsoString());
    return {
      kind: 'deliver',
      part: {
        from: address(parsed),
        text: parsed.data.getText(),
        receivedAt: Number.isNaN(receivedAt.getTime()) ? new Date() : receivedAt,
        ...(concat && { concat }),
      },
    };
  } catch (error) {
    return new Error(`malformed PDU: ${(error as Error).message}`);
  }
}

/** E.164 with `+` for an international number (node-pdu drops it), as it is otherwise. */
function address(pdu: Deliver): string {
  const phone = pdu.address.phone ?? '';
  return pdu.address.type.type === utils.SCAType.TYPE_INTERNATIONAL && !phone.startsWith('+') ? `+${phone}` : phone;
}

function hex(n: number): string {
  return n.toString(16).padStart(2, '0').toUpperCase();
}

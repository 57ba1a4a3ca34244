import { describe, expect, it } from 'vitest';
import { Deliver, Submit, parse, utils } from 'node-pdu';
import { buildSubmitParts, decodePdu } from './pdu-codec.ts';

function decodeSubmit(pdu: string) {
  const parsed = parse(pdu);
  if (!(parsed instanceof Submit)) throw new Error('not a submit');
  const header = parsed.data.parts[0]?.header;
  return {
    to: parsed.address.phone,
    text: parsed.data.getText(),
    statusReport: parsed.type.statusReportRequest,
    ucs2: parsed.dataCodingScheme.textAlphabet === utils.DCS.ALPHABET_UCS2,
    concat: header ? header.toJSON() : null,
  };
}

describe('buildSubmitParts', () => {
  it('builds one GSM-7 PDU asking for a status report, with the TPDU length for AT+CMGS', () => {
    const [part, ...rest] = buildSubmitParts('+447700900123', 'Hello {world} €5', 7);
    expect(rest).toEqual([]);
    expect(decodeSubmit(part!.pdu)).toEqual({ to: '447700900123', text: 'Hello {world} €5', statusReport: 1, ucs2: false, concat: null });
    expect(part!.tpduLength).toBe(part!.pdu.length / 2 - 1);
  });

  it('splits a long GSM-7 text in 153-septet parts with an 8-bit reference', () => {
    const text = `${'x'.repeat(150)}[]${'y'.repeat(100)}`;
    const parts = buildSubmitParts('+15550001111', text, 300);
    const decoded = parts.map((p) => decodeSubmit(p.pdu));
    expect(decoded.map((d) => d.text).join('')).toBe(text);
    expect(decoded.map((d) => d.concat)).toEqual([
      { POINTER: 44, SEGMENTS: 2, CURRENT: 1 },
      { POINTER: 44, SEGMENTS: 2, CURRENT: 2 },
    ]);
    expect(decoded.every((d) => d.statusReport === 1 && !d.ucs2)).toBe(true);
  });

  it('sends a 200-character UCS-2 text as three parts', () => {
    const text = 'Привет, мир! '.repeat(16).slice(0, 200);
    const decoded = buildSubmitParts('+15550001111', text, 5).map((p) => decodeSubmit(p.pdu));
    expect(decoded.map((d) => d.text)).toEqual([text.slice(0, 67), text.slice(67, 134), text.slice(134)]);
    expect(decoded.every((d) => d.ucs2 && d.statusReport === 1 && d.concat?.SEGMENTS === 3)).toBe(true);
  });
});

describe('decodePdu', () => {
  it('reads an incoming SMS with its sender in E.164', () => {
    const deliver = new Deliver('+447700900123', 'Hi there');
    const decoded = decodePdu(deliver.getPartStrings()[0]!);
    expect(decoded).toMatchObject({ kind: 'deliver', part: { from: '+447700900123', text: 'Hi there' } });
  });

  it('says why a PDU is unreadable instead of throwing', () => {
    expect(decodePdu('0011ZZ')).toBeInstanceOf(Error);
    expect(decodePdu('07911326040000F0040B911346610089F60000208062917314080CC8F71D14969741F977FD07')).not.toBeInstanceOf(Error);
  });
});

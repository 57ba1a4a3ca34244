import { describe, expect, it } from 'vitest';
import { AtLineSplitter, parseListing } from './at-lines.ts';
import { describeFinal, describeStatus } from './sms-errors.ts';

describe('AtLineSplitter', () => {
  it('tells final results, unsolicited codes, the prompt and other lines apart across chunks', () => {
    const splitter = new AtLineSplitter();
    expect(splitter.push('\r\n+CMTI: "SM",')).toEqual([]);
    expect(splitter.push('3\r\n\r\n+CDS: 25\r\n0006\r\nRING\r\n+CMS ERROR: 38\r\nOK\r\n\r\n> ')).toEqual([
      { type: 'unsolicited', code: { kind: 'cmti', memory: 'SM', index: 3 } },
      { type: 'unsolicited', code: { kind: 'cds', pdu: '0006' } },
      { type: 'line', line: 'RING' },
      { type: 'final', final: { kind: 'cms', code: 38, text: '38' }, line: '+CMS ERROR: 38' },
      { type: 'final', final: { kind: 'ok' }, line: 'OK' },
      { type: 'prompt' },
    ]);
  });

  it('reads a listing and skips what is not a header followed by a PDU', () => {
    expect(parseListing(['+CMGL: 1,0,,20', '0011AA', '+CMGL: 2,0,,20', 'garbage', '^BOOT:1'])).toEqual({
      messages: [{ index: 1, pdu: '0011AA' }],
      skipped: ['+CMGL: 2,0,,20', 'garbage', '^BOOT:1'],
    });
  });
});

describe('errors in words', () => {
  it('names the common +CMS and +CME codes and keeps unknown ones readable', () => {
    expect(describeFinal({ kind: 'cms', code: 330, text: '330' })).toBe('SMSC address unknown (+CMS ERROR: 330)');
    expect(describeFinal({ kind: 'cme', code: 16, text: '16' })).toBe('incorrect password (+CME ERROR: 16)');
    expect(describeFinal({ kind: 'cms', code: 999, text: '999' })).toBe('+CMS ERROR: 999');
    expect(describeFinal({ kind: 'cms', code: -1, text: 'SIM busy' })).toBe('SIM busy (+CMS ERROR: SIM busy)');
  });

  it('sorts status reports into delivered, still trying and failed', () => {
    expect(describeStatus(0).outcome).toBe('delivered');
    expect(describeStatus(0x21).outcome).toBe('pending');
    expect(describeStatus(0x41)).toEqual({ outcome: 'failed', text: 'Not delivered: incompatible destination (status report 0x41)' });
  });
});

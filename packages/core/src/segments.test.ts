import { describe, expect, it } from 'vitest';
import { segmentInfo, splitSegments } from './segments.ts';

const gsm = (n: number) => 'a'.repeat(n);
const ucs = (n: number) => 'ł'.repeat(n);

describe('segmentInfo: GSM-7', () => {
  it.each([
    [1, 1],
    [160, 1],
    [161, 2],
    [306, 2],
    [307, 3],
    [459, 3],
    [460, 4],
  ])('%i basic characters take %i segment(s)', (length, segments) => {
    expect(segmentInfo(gsm(length))).toEqual({ encoding: 'GSM-7', segments });
  });

  it('keeps the whole basic alphabet, including accented letters of GSM 03.38, in GSM-7', () => {
    expect(segmentInfo('@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ!"#¤%&\'()*+,-./:;<=>?¡ÄÖÑÜ§¿äöñüà\n\r').encoding).toBe('GSM-7');
  });

  it.each(['€', '{', '}', '[', ']', '~', '\\', '^', '|', '\f'])('counts the extension character %j as two septets', (char) => {
    expect(segmentInfo(char.repeat(80))).toEqual({ encoding: 'GSM-7', segments: 1 });
    expect(segmentInfo(char.repeat(81))).toEqual({ encoding: 'GSM-7', segments: 2 });
    expect(segmentInfo(gsm(159) + char)).toEqual({ encoding: 'GSM-7', segments: 2 });
  });

  it('never splits an escape pair across two segments', () => {
    // 306 septets would fit two segments of 153, but the euro would straddle the boundary.
    expect(segmentInfo(`${gsm(152)}€${gsm(152)}`)).toEqual({ encoding: 'GSM-7', segments: 3 });
    // The same count with the euro not on the boundary fits two.
    expect(segmentInfo(`€${gsm(304)}`)).toEqual({ encoding: 'GSM-7', segments: 2 });
    expect(segmentInfo(`${gsm(151)}{${gsm(153)}`)).toEqual({ encoding: 'GSM-7', segments: 2 });
  });
});

describe('segmentInfo: UCS-2', () => {
  it.each([
    [1, 1],
    [70, 1],
    [71, 2],
    [134, 2],
    [135, 3],
    [201, 3],
    [202, 4],
  ])('%i characters take %i segment(s)', (length, segments) => {
    expect(segmentInfo(ucs(length))).toEqual({ encoding: 'UCS-2', segments });
  });

  it('switches the whole text to UCS-2 for one character outside GSM, such as ł', () => {
    expect(segmentInfo(gsm(100))).toEqual({ encoding: 'GSM-7', segments: 1 });
    expect(segmentInfo(`${gsm(100)}ł`)).toEqual({ encoding: 'UCS-2', segments: 2 });
    expect(segmentInfo('Zażółć').encoding).toBe('UCS-2');
  });

  it('counts an extension character as one unit once the text is UCS-2', () => {
    expect(segmentInfo(`ł${'€'.repeat(69)}`)).toEqual({ encoding: 'UCS-2', segments: 1 });
  });

  it('counts an emoji as two UTF-16 units', () => {
    expect(segmentInfo('😀')).toEqual({ encoding: 'UCS-2', segments: 1 });
    expect(segmentInfo('😀'.repeat(35))).toEqual({ encoding: 'UCS-2', segments: 1 });
    expect(segmentInfo(`${'😀'.repeat(35)}a`)).toEqual({ encoding: 'UCS-2', segments: 2 });
  });

  it('never splits a surrogate pair across two segments', () => {
    // 134 units would fit two segments of 67, but the emoji would straddle the boundary.
    expect(segmentInfo(`${ucs(66)}😀${ucs(66)}`)).toEqual({ encoding: 'UCS-2', segments: 3 });
    expect(segmentInfo(`😀${ucs(132)}`)).toEqual({ encoding: 'UCS-2', segments: 2 });
  });
});

describe('splitSegments', () => {
  it('keeps a single SMS whole', () => {
    expect(splitSegments(gsm(160))).toEqual({ encoding: 'GSM-7', parts: [gsm(160)] });
    expect(splitSegments(ucs(70))).toEqual({ encoding: 'UCS-2', parts: [ucs(70)] });
  });

  it('cuts 153 septets or 67 units a part, an escape or surrogate pair never split', () => {
    expect(splitSegments(gsm(200)).parts.map((p) => p.length)).toEqual([153, 47]);
    expect(splitSegments(ucs(200)).parts.map((p) => p.length)).toEqual([67, 67, 66]);
    expect(splitSegments(`${gsm(152)}€${gsm(10)}`).parts).toEqual([gsm(152), `€${gsm(10)}`]);
    expect(splitSegments(`${ucs(66)}😀x${ucs(10)}`).parts).toEqual([ucs(66), `😀x${ucs(10)}`]);
  });

  it('always agrees with segmentInfo and gives the text back when joined', () => {
    const alphabet = ['a', '€', 'ł', '😀', ' ', '{'];
    for (let length = 0; length < 400; length += 7) {
      const text = Array.from({ length }, (_, i) => alphabet[(i * 7 + length) % alphabet.length]).join('');
      const split = splitSegments(text);
      expect(split.parts.join('')).toBe(text);
      expect({ encoding: split.encoding, segments: split.parts.length }).toEqual(segmentInfo(text));
    }
  });
});

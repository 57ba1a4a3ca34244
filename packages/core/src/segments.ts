/**
 * SMS encoding and segment count, as carriers compute them: GSM-7 when every character is in the
 * GSM 03.38 default alphabet or its extension table (extension characters take two septets), else
 * UCS-2 (UTF-16 units). One segment holds 160 septets or 70 units; a concatenated message holds 153 or
 * 67 per segment, and an escape pair or a surrogate pair is never split across two segments.
 */
export type Encoding = 'GSM-7' | 'UCS-2';

const GSM_BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENDED = '\f^{}\\[~]|€';

const basic = new Set(GSM_BASIC);
const extended = new Set(GSM_EXTENDED);

export interface SegmentInfo {
  encoding: Encoding;
  segments: number;
}

export function segmentInfo(text: string): SegmentInfo {
  const septets: number[] = [];
  for (const char of text) {
    if (basic.has(char)) septets.push(1);
    else if (extended.has(char)) septets.push(2);
    else return { encoding: 'UCS-2', segments: countSegments(ucs2Units(text), 70, 67) };
  }
  return { encoding: 'GSM-7', segments: countSegments(septets, 160, 153) };
}

function ucs2Units(text: string): number[] {
  const units: number[] = [];
  for (const char of text) units.push(char.length);
  return units;
}

/** Packs indivisible characters of the given widths into segments. */
function countSegments(widths: number[], single: number, multi: number): number {
  const total = widths.reduce((sum, w) => sum + w, 0);
  if (total <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const width of widths) {
    if (used + width > multi) {
      segments++;
      used = 0;
    }
    used += width;
  }
  return segments;
}

export interface SplitText {
  encoding: Encoding;
  /** The text of each segment, in order: one for a single SMS, else the concatenated parts (153 septets or 67 units each). */
  parts: string[];
}

/**
 * Splits a text into the segments `segmentInfo` counts, for a sender that builds one SMS per
 * segment (the modem agent): the same encoding and the same number of parts, never splitting an
 * escape pair or a surrogate pair.
 */
export function splitSegments(text: string): SplitText {
  const { encoding, segments } = segmentInfo(text);
  if (segments === 1) return { encoding, parts: [text] };
  const multi = encoding === 'GSM-7' ? 153 : 67;
  const parts: string[] = [];
  let current = '';
  let used = 0;
  for (const char of text) {
    const width = encoding === 'GSM-7' ? (extended.has(char) ? 2 : 1) : char.length;
    if (used + width > multi) {
      parts.push(current);
      current = '';
      used = 0;
    }
    current += char;
    used += width;
  }
  parts.push(current);
  return { encoding, parts };
}

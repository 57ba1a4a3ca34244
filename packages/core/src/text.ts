/** Maximum length of a message text, in Unicode code points. */
export const MAX_BODY_CODE_POINTS = 1600;

/** Length in Unicode code points (an emoji is one), not bytes and not UTF-16 units. */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text that a device sent (an incoming SMS, an error it reported, its SIM cards), made storable:
 * Postgres text cannot hold U+0000, and its json and jsonb refuse the escape of a lone surrogate
 * (`"\ud800"`, which JSON.stringify writes), so both become U+FFFD like any other character the
 * phone could not decode.
 */
export function storableText(text: string): string {
  const noNul = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
  return noNul.replace(LONE_SURROGATE, '\uFFFD');
}

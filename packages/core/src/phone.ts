const E164 = /^\+[1-9]\d{1,14}$/;

/** E.164 as decisions.md fixes it: a plus, a non-zero digit, at most 15 digits; nothing is normalised. */
export function isE164(value: string): boolean {
  return E164.test(value);
}

import { isSupportedCountry, parsePhoneNumberWithError, ParseError, type CountryCode } from 'libphonenumber-js/max';
import { AppError, isE164 } from '@smsgw/core';

/**
 * SMS Gate's phone numbers as smsgw sends them (docs/compatibility.md): an E.164 number as it is;
 * another spelling (spaces, dashes, brackets, no `+`) read with libphonenumber, a number without
 * `+` in PHONE_DEFAULT_REGION, and kept only when valid. Upstream reads them in RU; smsgw has no
 * default and refuses them when the operator set none.
 */
export function toE164(numbers: readonly string[], region: string | undefined): string[] {
  const out = numbers.map((n, i) => toOne(n, i + 1, region));
  if (new Set(out).size !== out.length) throw new AppError('invalid_request', 'phone numbers must be unique');
  return out;
}

function toOne(input: string, row: number, region: string | undefined): string {
  if (isE164(input)) return input;
  const international = input.trimStart().startsWith('+');
  if (!international && region === undefined) {
    throw new AppError('invalid_request', `failed to use phone in row ${row}: a number without + needs the server's PHONE_DEFAULT_REGION, which is not set`);
  }
  try {
    const parsed = parsePhoneNumberWithError(input, international ? undefined : { defaultCountry: region as CountryCode });
    if (!parsed.isValid()) throw new AppError('invalid_request', `failed to use phone in row ${row}: invalid phone number`);
    return parsed.number;
  } catch (error) {
    if (error instanceof ParseError) throw new AppError('invalid_request', `failed to use phone in row ${row}: failed to parse phone number: ${error.message}`);
    throw error;
  }
}

/** Whether libphonenumber knows the region (checked once at start, so that a typo fails fast). */
export function isKnownRegion(region: string): boolean {
  return isSupportedCountry(region);
}

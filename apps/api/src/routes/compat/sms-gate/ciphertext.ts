import { AppError } from '@smsgw/core';

/**
 * SMS Gate's end-to-end encryption (docs/compatibility.md, "Encrypted messages"): with
 * `isEncrypted`, the text and each phone number are the client's ciphertexts,
 * `$aes-256-cbc/pbkdf2-sha1$i=<iterations>$<base64 salt>$<base64 ciphertext>`, which only the phone
 * that holds the passphrase can read (app `modules/encryption/EncryptionService.kt`). smsgw never
 * has the passphrase: it checks the shape as loosely as the app parses it (its parameters are
 * `key=value` pairs separated by commas, of which `i` is required) and forwards the strings unchanged.
 */
const FORMAT = 'aes-256-cbc/pbkdf2-sha1';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const ITERATIONS = /^[1-9]\d{0,9}$/;

export function isSmsGateCiphertext(value: string): boolean {
  const chunks = value.split('$');
  if (chunks.length !== 5 || chunks[0] !== '' || chunks[1] !== FORMAT) return false;
  // The app reads each parameter as `key=value` (one without `=` fails it) and needs `i`.
  const params = chunks[2]!.split(',');
  if (!params.every((pair) => pair.indexOf('=') > 0)) return false;
  const iterations = params.find((pair) => pair.startsWith('i='))?.slice(2) ?? '';
  return ITERATIONS.test(iterations) && BASE64.test(chunks[3]!) && BASE64.test(chunks[4]!);
}

/**
 * The encrypted phone numbers as smsgw stores them: each a ciphertext, kept byte for byte. Two
 * equal strings are the same recipient twice (refused as upstream refuses duplicate numbers);
 * two encryptions of one number differ, and smsgw cannot tell.
 */
export function encryptedRecipients(numbers: readonly string[]): string[] {
  numbers.forEach((n, i) => {
    if (!isSmsGateCiphertext(n))
      throw new AppError('invalid_request', `failed to use phone in row ${i + 1}: not an SMS Gate ciphertext ($${FORMAT}$i=…$salt$data)`);
  });
  if (new Set(numbers).size !== numbers.length) throw new AppError('invalid_request', 'phone numbers must be unique');
  return [...numbers];
}

/** Refuses an encrypted text that is not a ciphertext (400). */
export function assertEncryptedText(text: string, field: string): void {
  if (!isSmsGateCiphertext(text)) throw new AppError('invalid_request', `${field}: not an SMS Gate ciphertext ($${FORMAT}$i=…$salt$data)`);
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Credentials handed out once and stored only as SHA-256: API keys (`smsgw_sk_…`) and device
 * tokens (`smsgw_dt_…`). The prefix makes a leaked key recognisable to secret scanners.
 */
export const API_KEY_PREFIX = 'smsgw_sk_';
export const DEVICE_TOKEN_PREFIX = 'smsgw_dt_';

export function generateSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(secret).digest());
}

/** The part of a key shown in listings: the prefix and the first characters of the random part. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, 15);
}

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

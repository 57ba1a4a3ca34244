import { createDecipheriv, pbkdf2Sync } from 'node:crypto';

/**
 * SMS Gate's passphrase encryption as its clients and its app do it, for tests (docs/compatibility.md,
 * "Encrypted messages"). The served `android-sms-gateway` 3.0.0 has no encryptor: `encryptValue` is
 * the newer client's (android-sms-gateway/client-ts `PassphraseMessageEncryptor.encryptValue`: Web
 * Crypto, a PBKDF2-SHA1 key from the passphrase and a fresh 16-byte salt, AES-256-CBC with the salt
 * as the IV), and `decryptAsApp` the app's (`EncryptionService.decrypt`: the iterations read from
 * the string), written with node's crypto so that the two sides share no code.
 */
export const PASSPHRASE_FORMAT = 'aes-256-cbc/pbkdf2-sha1';
/** The clients' default. */
export const DEFAULT_ITERATIONS = 75_000;

export async function encryptValue(passphrase: string, plaintext: string, iterations = DEFAULT_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const baseKey = await crypto.subtle.importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, ['deriveKey']);
  const key = await crypto.subtle.deriveKey({ name: 'PBKDF2', salt, iterations, hash: 'SHA-1' }, baseKey, { name: 'AES-CBC', length: 256 }, false, ['encrypt']);
  const data = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-CBC', iv: salt }, key, new TextEncoder().encode(plaintext)));
  return `$${PASSPHRASE_FORMAT}$i=${iterations}$${Buffer.from(salt).toString('base64')}$${Buffer.from(data).toString('base64')}`;
}

export function decryptAsApp(passphrase: string, value: string): string {
  const [, format, params = '', salt = '', data = ''] = value.split('$');
  if (format !== PASSPHRASE_FORMAT) throw new Error(`Unsupported algorithm: ${format}`);
  const iterations = Number(
    params
      .split(',')
      .find((p) => p.startsWith('i='))
      ?.slice(2),
  );
  const iv = Buffer.from(salt, 'base64');
  const decipher = createDecipheriv('aes-256-cbc', pbkdf2Sync(passphrase, iv, iterations, 32, 'sha1'), iv);
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
}

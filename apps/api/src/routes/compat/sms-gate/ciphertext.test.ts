import { describe, expect, it } from 'vitest';
import { encryptValue } from '../../../testing/sms-gate-encryption.ts';
import { encryptedRecipients, isSmsGateCiphertext } from './ciphertext.ts';

describe('SMS Gate ciphertexts', () => {
  it('takes what the newer client encrypts, a phone number (longer than an E.164 number) and a text alike', async () => {
    const number = await encryptValue('correct horse', '+15551234567', 1000);
    const text = await encryptValue('correct horse', 'Привет, мир! '.repeat(40), 1000);
    expect([isSmsGateCiphertext(number), isSmsGateCiphertext(text)]).toEqual([true, true]);
    expect(number.length).toBeGreaterThan(64);
    expect(encryptedRecipients([number])).toEqual([number]);
  });

  it('reads the parameters as the app does: comma-separated key=value pairs, `i` among them', () => {
    expect(isSmsGateCiphertext('$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdHNhbHRzYWx0c2FsdA==$Y2lwaGVy')).toBe(true);
    expect(isSmsGateCiphertext('$aes-256-cbc/pbkdf2-sha1$v=2,i=300000$c2FsdA==$Y2lwaGVy')).toBe(true);
  });

  it.each([
    ['plain text', 'hello'],
    ['an E.164 number', '+15551234567'],
    ['another algorithm', '$aes-128-cbc/pbkdf2-sha1$i=75000$c2FsdA==$Y2lwaGVy'],
    ['the public-key format, which needs keys smsgw does not hold', '$rsa-oaep-aes-256-gcm$v=1$k=1$a2V5$aXY=$Y2lwaGVy'],
    ['no iterations', '$aes-256-cbc/pbkdf2-sha1$n=75000$c2FsdA==$Y2lwaGVy'],
    ['iterations of zero', '$aes-256-cbc/pbkdf2-sha1$i=0$c2FsdA==$Y2lwaGVy'],
    ['a parameter without =', '$aes-256-cbc/pbkdf2-sha1$i=75000,x$c2FsdA==$Y2lwaGVy'],
    ['no salt', '$aes-256-cbc/pbkdf2-sha1$i=75000$$Y2lwaGVy'],
    ['a ciphertext that is not base64', '$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdA==$not base64!'],
    ['a chunk too many', '$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdA==$Y2lwaGVy$'],
    ['text before the first $', 'x$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdA==$Y2lwaGVy'],
  ])('refuses %s', (_name, value) => {
    expect(isSmsGateCiphertext(value)).toBe(false);
  });

  it('refuses a recipient that is no ciphertext by its row, and the same ciphertext twice', () => {
    const c = '$aes-256-cbc/pbkdf2-sha1$i=75000$c2FsdA==$Y2lwaGVy';
    expect(() => encryptedRecipients([c, '+15551234567'])).toThrow(/^failed to use phone in row 2: not an SMS Gate ciphertext/);
    expect(() => encryptedRecipients([c, c])).toThrow(/^phone numbers must be unique$/);
  });
});

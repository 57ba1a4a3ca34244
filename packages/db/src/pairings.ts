import { randomBytes, randomInt } from 'node:crypto';
import { newId } from '@smsgw/core';
import type { Db } from './client.ts';
import { DEVICE_TOKEN_PREFIX, generateSecret, hashSecret } from './secrets.ts';

/**
 * Pairings (real-devices.md §1): a one-time 8-digit code and token with which a phone enrols
 * itself as one of the user's devices. Both are stored only as SHA-256; the first registration
 * with either spends the pairing.
 */
export const PAIRING_TOKEN_PREFIX = 'smsgw_pt_';

export interface NewPairing {
  id: string;
  code: string;
  token: string;
  expiresAt: Date;
}

export async function createPairing(db: Db, options: { userId: string; name?: string; ttlSeconds: number; now?: Date }): Promise<NewPairing> {
  const now = options.now ?? new Date();
  const expiresAt = new Date(now.getTime() + options.ttlSeconds * 1000);
  for (let attempt = 0; ; attempt++) {
    const code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    const token = generateSecret(PAIRING_TOKEN_PREFIX);
    const id = newId();
    try {
      await db.devicePairing.create({
        data: { id, userId: options.userId, name: options.name ?? null, codeHash: hashSecret(code), tokenHash: hashSecret(token), expiresAt, createdAt: now },
      });
      return { id, code, token, expiresAt };
    } catch (error) {
      // The same code as a pairing of the last day: draw another.
      if ((error as { code?: string }).code !== 'P2002' || attempt >= 5) throw error;
    }
  }
}

export interface PhoneRegistration {
  name: string;
  appVersion: string | null;
  pushToken: boolean;
  simCards: unknown;
}

export interface RegisteredPhone {
  id: string;
  userId: string;
  token: string;
}

/**
 * Spends the pairing whose code or token is `secret` and creates the SMS Gate device it enrols, in
 * one transaction; null when the secret is unknown, spent or expired.
 */
export async function registerPairedPhone(db: Db, secret: string, phone: PhoneRegistration, now = new Date()): Promise<RegisteredPhone | null> {
  const hash = hashSecret(secret);
  const column = secret.startsWith(PAIRING_TOKEN_PREFIX) ? 'tokenHash' : 'codeHash';
  return db.$transaction(async (tx) => {
    const pairing = await tx.devicePairing.findFirst({ where: { [column]: hash, usedAt: null, expiresAt: { gt: now } }, select: { id: true, userId: true, name: true } });
    if (!pairing) return null;
    // The compare-and-set spends it once, whatever registrations race for it.
    const { count } = await tx.devicePairing.updateMany({ where: { id: pairing.id, usedAt: null }, data: { usedAt: now } });
    if (count !== 1) return null;
    const token = generateSecret(DEVICE_TOKEN_PREFIX);
    const id = newId();
    await tx.device.create({
      data: {
        id, userId: pairing.userId, name: pairing.name ?? phone.name, protocol: 'sms_gate', tokenHash: hashSecret(token),
        appVersion: phone.appVersion, pushToken: phone.pushToken, simCards: phone.simCards ?? undefined,
        signingKey: randomBytes(24).toString('base64url'), inboundSecret: randomBytes(24).toString('base64url'), createdAt: now, updatedAt: now,
      },
    });
    await tx.devicePairing.update({ where: { id: pairing.id }, data: { deviceId: id } });
    return { id, userId: pairing.userId, token };
  });
}

import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeviceSimConfig } from '@smsgw/config';

/** What the app stores after `POST /device` and never clears (real-devices.md 2b.1). */
export interface StoredRegistration {
  id: string;
  token: string;
  login: string;
}

export function statePath(dir: string, index: number): string {
  return join(dir, `${index}.json`);
}

export async function loadRegistration(dir: string | undefined, index: number): Promise<StoredRegistration | undefined> {
  if (!dir) return undefined;
  const text = await readFile(statePath(dir, index), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  const stored = JSON.parse(text) as Partial<StoredRegistration>;
  if (typeof stored.id !== 'string' || typeof stored.token !== 'string') throw new Error(`${statePath(dir, index)} holds no registration`);
  return { id: stored.id, token: stored.token, login: stored.login ?? '' };
}

export async function saveRegistration(dir: string | undefined, index: number, registration: StoredRegistration): Promise<void> {
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  // Written aside and renamed: a sim stopped mid-write keeps its previous registration.
  const path = statePath(dir, index);
  await writeFile(`${path}.tmp`, JSON.stringify(registration), { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

/**
 * The phones to start: one per `SIM_PAIRING` entry, or, without pairings, one per registration
 * stored in `SIM_STATE_DIR` (0.json, 1.json, … with no gap). Phone n uses pairing n and state n.
 */
export async function phoneSlots(config: Pick<DeviceSimConfig, 'SIM_PAIRING' | 'SIM_STATE_DIR'>): Promise<{ index: number; pairing?: string }[]> {
  const pairings = config.SIM_PAIRING?.split(',') ?? [];
  if (pairings.length > 0) return pairings.map((pairing, index) => ({ index, pairing }));
  const files = config.SIM_STATE_DIR ? new Set(await readdir(config.SIM_STATE_DIR).catch(() => [])) : new Set<string>();
  const slots: { index: number }[] = [];
  while (files.has(`${slots.length}.json`)) slots.push({ index: slots.length });
  if (slots.length === 0) throw new Error('an sms-gate simulator needs SIM_PAIRING, or registrations stored in SIM_STATE_DIR');
  return slots;
}

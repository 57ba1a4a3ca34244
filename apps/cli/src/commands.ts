import { publicUrl, type CliConfig } from '@smsgw/config';
import { availabilityWindows, deviceConnection, isUuid } from '@smsgw/core';
import {
  createApiKey, createDevice, createPairing, createUser, deleteDevice, findDevice, findUser, listDevices, setUserQuota, updateDevice,
  type Db, type DeviceRow,
} from '@smsgw/db';
import { pairingSteps } from './pairing.ts';

/** Operator commands. Each takes parsed flags and returns the JSON it prints. */
export class CliError extends Error {
  override name = 'CliError';
}

type Flags = Record<string, string | undefined>;

export interface CliContext {
  db: Db;
  config: CliConfig;
}

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new CliError(`--${name} is required`);
  return value;
}

function nonNegativeInteger(value: string, name: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new CliError(`--${name} must be a whole number >= 0`);
  return Number(value);
}

async function existingUser(db: Db, flags: Flags) {
  const id = required(flags, 'user');
  const user = isUuid(id) ? await findUser(db, id) : null;
  if (!user) throw new CliError(`no user with id ${id}`);
  return user;
}

async function existingDevice(db: Db, flags: Flags): Promise<DeviceRow> {
  const user = await existingUser(db, flags);
  const id = required(flags, 'device');
  const device = isUuid(id) ? await findDevice(db, { userId: user.id, id }) : null;
  if (!device) throw new CliError(`no device with id ${id} for user ${user.id}`);
  return device;
}

function deviceSummary(device: DeviceRow, config: CliConfig, now: Date) {
  const { available, connection, warnings } = deviceConnection(device, availabilityWindows(config, now));
  return {
    id: device.id,
    name: device.name,
    protocol: device.protocol,
    enabled: device.enabled,
    available,
    connection,
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    app_version: device.appVersion,
    warnings,
    created_at: device.createdAt.toISOString(),
  };
}

async function setEnabled({ db }: CliContext, flags: Flags, enabled: boolean) {
  const device = await existingDevice(db, flags);
  if (!(await updateDevice(db, { userId: device.userId, id: device.id, enabled }))) throw new CliError(`no device with id ${device.id}`);
  return { device_id: device.id, enabled };
}

export const COMMANDS: Record<string, { usage: string; run: (context: CliContext, flags: Flags) => Promise<object> }> = {
  'user create': {
    usage: 'user create --name NAME [--quota MESSAGES_PER_MONTH]',
    run: async ({ db }, flags) => {
      const name = required(flags, 'name');
      const monthlyQuota = flags.quota === undefined ? null : nonNegativeInteger(flags.quota, 'quota');
      const user = await createUser(db, { name, monthlyQuota });
      const { key } = await createApiKey(db, { userId: user.id, name: 'created by smsgw user create' });
      return { user_id: user.id, api_key: key };
    },
  },
  'key create': {
    usage: 'key create --user USER_ID [--name NAME]',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const { key, record } = await createApiKey(db, { userId: user.id, name: flags.name ?? 'created by smsgw key create' });
      return { api_key: key, key_id: record.id };
    },
  },
  'device create': {
    usage: 'device create --user USER_ID --name NAME',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const { token, device } = await createDevice(db, { userId: user.id, name: required(flags, 'name') });
      return { device_id: device.id, device_token: token };
    },
  },
  'quota set': {
    usage: 'quota set --user USER_ID --limit MESSAGES_PER_MONTH',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const limit = nonNegativeInteger(required(flags, 'limit'), 'limit');
      await setUserQuota(db, { userId: user.id, limit });
      return { user_id: user.id, limit };
    },
  },
  'device list': {
    usage: 'device list --user USER_ID',
    run: async ({ db, config }, flags) => {
      const user = await existingUser(db, flags);
      const now = new Date();
      return { data: (await listDevices(db, user.id)).map((device) => deviceSummary(device, config, now)) };
    },
  },
  'device disable': {
    usage: 'device disable --user USER_ID --device DEVICE_ID',
    run: (context, flags) => setEnabled(context, flags, false),
  },
  'device enable': {
    usage: 'device enable --user USER_ID --device DEVICE_ID',
    run: (context, flags) => setEnabled(context, flags, true),
  },
  'device delete': {
    usage: 'device delete --user USER_ID --device DEVICE_ID',
    run: async ({ db }, flags) => {
      const device = await existingDevice(db, flags);
      if (!(await deleteDevice(db, { userId: device.userId, id: device.id }))) throw new CliError(`no device with id ${device.id}`);
      return { device_id: device.id, deleted: true };
    },
  },
  'pairing create': {
    usage: 'pairing create --user USER_ID [--name DEVICE_NAME]',
    run: async ({ db, config }, flags) => {
      const user = await existingUser(db, flags);
      if (flags.name === '') throw new CliError('--name must not be empty');
      const { code, token, expiresAt } = await createPairing(db, { userId: user.id, name: flags.name, ttlSeconds: config.PAIRING_TTL_SECONDS });
      const mobileUrl = `${publicUrl(config)}/mobile/v1`;
      return {
        code, token, expires_at: expiresAt.toISOString(), mobile_url: mobileUrl,
        steps: pairingSteps({ code, token, expiresAt, mobileUrl }),
      };
    },
  },
};

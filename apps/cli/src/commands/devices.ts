import { publicUrl } from '@smsgw/config';
import { MAX_RATE_LIMIT, pairingSteps } from '@smsgw/core';
import { createDevice, createPairing, deleteDevice, listDevices, updateDevice } from '@smsgw/db';
import type { Command } from '../command.ts';
import type { CliContext } from '../context.ts';
import { notFound, usageError } from '../errors.ts';
import { existingDevice, existingUser, required, wholeNumber, type Flags } from '../flags.ts';
import { deviceRecord } from '../records.ts';

async function setEnabled({ db, config }: CliContext, flags: Flags, enabled: boolean) {
  const device = await existingDevice(db, flags);
  const updated = await updateDevice(db, { userId: device.userId, id: device.id, enabled });
  if (!updated) throw notFound(`no device with id ${device.id}`);
  return deviceRecord(updated, config, new Date());
}

const pair: Command = {
  usage: 'device pair --user USER [--name DEVICE_NAME]',
  run: async ({ db, config }, flags) => {
    const user = await existingUser(db, flags);
    if (flags.name === '') throw usageError('--name must not be empty');
    const { code, token, expiresAt } = await createPairing(db, { userId: user.id, name: flags.name, ttlSeconds: config.PAIRING_TTL_SECONDS });
    const mobileUrl = `${publicUrl(config)}/mobile/v1`;
    return {
      code, token, expires_at: expiresAt.toISOString(), mobile_url: mobileUrl,
      steps: pairingSteps({ code, token, expiresAt, mobileUrl }),
    };
  },
};

export const deviceCommands: Record<string, Command> = {
  'device create': {
    usage: 'device create --user USER --name NAME',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const { token, device } = await createDevice(db, { userId: user.id, name: required(flags, 'name') });
      return { device_id: device.id, device_token: token };
    },
  },
  'device pair': pair,
  // The name of this command before `device pair`.
  'pairing create': { ...pair, usage: 'pairing create --user USER [--name DEVICE_NAME]' },
  'device list': {
    usage: 'device list --user USER',
    run: async ({ db, config }, flags) => {
      const user = await existingUser(db, flags);
      const now = new Date();
      return { data: (await listDevices(db, user.id)).map((device) => deviceRecord(device, config, now)) };
    },
  },
  'device show': {
    usage: 'device show --user USER --device DEVICE_ID',
    run: async ({ db, config }, flags) => deviceRecord(await existingDevice(db, flags), config, new Date()),
  },
  'device disable': {
    usage: 'device disable --user USER --device DEVICE_ID',
    run: (context, flags) => setEnabled(context, flags, false),
  },
  'device enable': {
    usage: 'device enable --user USER --device DEVICE_ID',
    run: (context, flags) => setEnabled(context, flags, true),
  },
  'device limit': {
    usage: 'device limit --user USER --device DEVICE_ID [--per-minute N|none] [--per-hour N|none] [--per-day N|none]',
    run: async ({ db, config }, flags) => {
      const device = await existingDevice(db, flags);
      const limit = (name: string) => {
        const value = flags[name];
        if (value === undefined) return undefined;
        return value === 'none' ? null : wholeNumber(value, name, 1, MAX_RATE_LIMIT);
      };
      const changes = { rateLimitPerMinute: limit('per-minute'), rateLimitPerHour: limit('per-hour'), rateLimitPerDay: limit('per-day') };
      if (Object.values(changes).every((v) => v === undefined)) throw usageError('give --per-minute, --per-hour or --per-day (a number, or none)');
      const updated = await updateDevice(db, { userId: device.userId, id: device.id, ...changes });
      if (!updated) throw notFound(`no device with id ${device.id}`);
      return deviceRecord(updated, config, new Date());
    },
  },
  'device delete': {
    usage: 'device delete --user USER --device DEVICE_ID',
    run: async ({ db }, flags) => {
      const device = await existingDevice(db, flags);
      if (!(await deleteDevice(db, { userId: device.userId, id: device.id }))) throw notFound(`no device with id ${device.id}`);
      return { device_id: device.id, deleted: true };
    },
  },
};

import { publicUrl } from '@smsgw/config';
import { BUDGET_FIELDS, MAX_BUDGET, MAX_RATE_LIMIT, pairingSteps, type Budgets, type ListPosition } from '@smsgw/core';
import { createDevice, createPairing, deleteDevice, pageDevices, updateDevice } from '@smsgw/db';
import type { Command } from '../command.ts';
import type { CliContext } from '../context.ts';
import { notFound, usageError } from '../errors.ts';
import { existingDevice, existingUser, required, wholeNumber, type Flags } from '../flags.ts';
import { deviceRecord, deviceRecords } from '../records.ts';

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
      code,
      token,
      expires_at: expiresAt.toISOString(),
      mobile_url: mobileUrl,
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
    run: async ({ db, sql, config }, flags) => {
      const user = await existingUser(db, flags);
      // Page after page, so that each statement (the devices, their budgets' usage) stays a page's size.
      const data = [];
      let after: ListPosition | undefined;
      do {
        const page = await pageDevices(db, { userId: user.id, limit: 500, after });
        data.push(...(await deviceRecords(sql, page.rows, config)));
        after = page.next ?? undefined;
      } while (after);
      return { data };
    },
  },
  'device show': {
    usage: 'device show --user USER --device DEVICE_ID',
    run: async ({ db, sql, config }, flags) => (await deviceRecords(sql, [await existingDevice(db, flags)], config))[0]!,
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
    usage:
      'device limit --user USER --device DEVICE_ID [--per-minute N|none] [--per-hour N|none] [--per-day N|none]\n' +
      '    [--segments-per-hour N|none] [--segments-per-day N|none] [--segments-per-month N|none] [--unique-recipients-per-month N|none]\n' +
      '    [--sim 1|2|3]   (carrier budgets: message parts and different recipients; with --sim they apply to that SIM only)',
    run: async ({ db, sql, config }, flags) => {
      const device = await existingDevice(db, flags);
      const limit = (name: string, max: number) => {
        const value = flags[name];
        if (value === undefined) return undefined;
        return value === 'none' ? null : wholeNumber(value, name, 1, max);
      };
      const rates = {
        rateLimitPerMinute: limit('per-minute', MAX_RATE_LIMIT),
        rateLimitPerHour: limit('per-hour', MAX_RATE_LIMIT),
        rateLimitPerDay: limit('per-day', MAX_RATE_LIMIT),
      };
      const budgets = Object.fromEntries(BUDGET_FIELDS.map(([field, key]) => [key, limit(field.replaceAll('_', '-'), MAX_BUDGET)])) as Partial<Budgets>;
      const sim = flags.sim === undefined ? undefined : wholeNumber(flags.sim, 'sim', 1, 3);
      const budgetGiven = Object.values(budgets).some((v) => v !== undefined);
      if (!budgetGiven && Object.values(rates).every((v) => v === undefined)) {
        throw usageError('give --per-minute, --per-hour, --per-day or a --segments-per-… / --unique-recipients-per-month budget (a number, or none)');
      }
      if (sim !== undefined && !budgetGiven) throw usageError('--sim applies to the carrier budgets: give one of them too');
      const simPatch = sim === undefined ? undefined : [{ sim_number: sim, ...Object.fromEntries(BUDGET_FIELDS.map(([field, key]) => [field, budgets[key]])) }];
      const updated = await updateDevice(db, { userId: device.userId, id: device.id, ...rates, ...(simPatch ? { sims: simPatch } : { budgets }) });
      if (!updated) throw notFound(`no device with id ${device.id}`);
      return (await deviceRecords(sql, [updated], config))[0]!;
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

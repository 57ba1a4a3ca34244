import { isUuid } from '@smsgw/core';
import { createApiKey, createDevice, createUser, findUser, setUserQuota, type Db } from '@smsgw/db';

/** Operator commands. Each takes parsed flags and returns the JSON it prints. */
export class CliError extends Error {
  override name = 'CliError';
}

type Flags = Record<string, string | undefined>;

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

export const COMMANDS: Record<string, { usage: string; run: (db: Db, flags: Flags) => Promise<object> }> = {
  'user create': {
    usage: 'user create --name NAME [--quota MESSAGES_PER_MONTH]',
    run: async (db, flags) => {
      const name = required(flags, 'name');
      const monthlyQuota = flags.quota === undefined ? null : nonNegativeInteger(flags.quota, 'quota');
      const user = await createUser(db, { name, monthlyQuota });
      const { key } = await createApiKey(db, { userId: user.id, name: 'created by smsgw user create' });
      return { user_id: user.id, api_key: key };
    },
  },
  'key create': {
    usage: 'key create --user USER_ID [--name NAME]',
    run: async (db, flags) => {
      const user = await existingUser(db, flags);
      const { key, record } = await createApiKey(db, { userId: user.id, name: flags.name ?? 'created by smsgw key create' });
      return { api_key: key, key_id: record.id };
    },
  },
  'device create': {
    usage: 'device create --user USER_ID --name NAME',
    run: async (db, flags) => {
      const user = await existingUser(db, flags);
      const { token, device } = await createDevice(db, { userId: user.id, name: required(flags, 'name') });
      return { device_id: device.id, device_token: token };
    },
  },
  'quota set': {
    usage: 'quota set --user USER_ID --limit MESSAGES_PER_MONTH',
    run: async (db, flags) => {
      const user = await existingUser(db, flags);
      const limit = nonNegativeInteger(required(flags, 'limit'), 'limit');
      await setUserQuota(db, { userId: user.id, limit });
      return { user_id: user.id, limit };
    },
  },
};

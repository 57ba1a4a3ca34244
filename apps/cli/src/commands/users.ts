import { countDevices, createApiKey, createUser, listApiKeys, listUsers, setUserDisabled } from '@smsgw/db';
import type { Command } from '../command.ts';
import type { CliContext } from '../context.ts';
import { existingUser, paging, required, wholeNumber, type Flags } from '../flags.ts';
import { userRecord } from '../records.ts';

async function setDisabled({ db }: CliContext, flags: Flags, disabled: boolean) {
  const user = await existingUser(db, flags);
  // The user exists (just found); users are never deleted.
  const changed = await setUserDisabled(db, { userId: user.id, disabled });
  return userRecord(changed ?? user);
}

export const userCommands: Record<string, Command> = {
  'user create': {
    usage: 'user create --name NAME [--quota MESSAGES_PER_MONTH]',
    run: async ({ db }, flags) => {
      const name = required(flags, 'name');
      const monthlyQuota = flags.quota === undefined ? null : wholeNumber(flags.quota, 'quota');
      const user = await createUser(db, { name, monthlyQuota });
      const { key } = await createApiKey(db, { userId: user.id, name: 'created by smsgw user create' });
      return { user_id: user.id, api_key: key };
    },
  },
  'user list': {
    usage: 'user list [--limit N] [--offset N]',
    run: async ({ db }, flags) => {
      const page = paging(flags);
      const { rows, total } = await listUsers(db, page);
      return { data: rows.map(userRecord), total, ...page };
    },
  },
  'user show': {
    usage: 'user show --user USER',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const [keys, devices] = await Promise.all([listApiKeys(db, user.id), countDevices(db, user.id)]);
      return { ...userRecord(user), api_keys: keys.filter((key) => !key.revokedAt).length, devices };
    },
  },
  'user disable': {
    usage: 'user disable --user USER',
    run: (context, flags) => setDisabled(context, flags, true),
  },
  'user enable': {
    usage: 'user enable --user USER',
    run: (context, flags) => setDisabled(context, flags, false),
  },
};

import { isUuid } from '@smsgw/core';
import { createApiKey, listApiKeys, revokeApiKey } from '@smsgw/db';
import type { Command } from '../command.ts';
import { notFound } from '../errors.ts';
import { existingUser, required } from '../flags.ts';
import { apiKeyRecord } from '../records.ts';

export const keyCommands: Record<string, Command> = {
  'key create': {
    usage: 'key create --user USER [--name NAME]',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const { key, record } = await createApiKey(db, { userId: user.id, name: flags.name || 'created by smsgw key create' });
      return { api_key: key, key_id: record.id };
    },
  },
  'key list': {
    usage: 'key list --user USER',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      return { data: (await listApiKeys(db, user.id)).map(apiKeyRecord) };
    },
  },
  'key revoke': {
    usage: 'key revoke --user USER --key KEY_ID',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const id = required(flags, 'key');
      // As DELETE /api/v1/api-keys/:id: revoking a revoked key again keeps its first revocation.
      if (!isUuid(id) || !(await revokeApiKey(db, { userId: user.id, id }))) throw notFound(`no API key with id ${id} for user ${flags.user}`);
      const revoked = (await listApiKeys(db, user.id)).find((key) => key.id === id);
      return apiKeyRecord(revoked!);
    },
  },
};

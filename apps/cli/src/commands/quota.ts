import { quotaPeriod } from '@smsgw/core';
import { quotaUsed, setUserQuota } from '@smsgw/db';
import type { Command } from '../command.ts';
import { existingUser, required, wholeNumber } from '../flags.ts';

export const quotaCommands: Record<string, Command> = {
  'quota show': {
    usage: 'quota show --user USER',
    // The figures of GET /api/v1/quota for that user.
    run: async ({ db, config }, flags) => {
      const user = await existingUser(db, flags);
      const period = quotaPeriod(new Date());
      const limit = user.monthlyQuota ?? config.MONTHLY_QUOTA_DEFAULT;
      const used = await quotaUsed(db, { userId: user.id, period: period.start });
      return {
        user_id: user.id,
        period: period.label,
        limit,
        limit_is_default: user.monthlyQuota === null,
        used,
        remaining: Math.max(0, limit - used),
        resets_at: period.resetsAt.toISOString(),
      };
    },
  },
  'quota set': {
    usage: 'quota set --user USER --limit MESSAGES_PER_MONTH|default',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const value = required(flags, 'limit');
      // `default`: back to MONTHLY_QUOTA_DEFAULT of the environment.
      const limit = value === 'default' ? null : wholeNumber(value, 'limit');
      await setUserQuota(db, { userId: user.id, limit });
      return { user_id: user.id, limit };
    },
  },
};

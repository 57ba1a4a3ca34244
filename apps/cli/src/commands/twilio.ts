import { rotateTwilioAuthToken, twilioAccount, type TwilioAccount } from '@smsgw/db';
import type { Command } from '../command.ts';
import { existingUser } from '../flags.ts';

const view = (userId: string, a: TwilioAccount) => ({
  user_id: userId,
  account_sid: a.accountSid,
  messaging_service_sid: a.messagingServiceSid,
  auth_token: a.authToken,
});

/** The user's credentials for Twilio's Messages API (docs/compatibility.md), as `GET /api/v1/twilio` shows them. */
export const twilioCommands: Record<string, Command> = {
  'twilio show': {
    usage: 'twilio show --user USER',
    run: async ({ db, sql }, flags) => {
      const user = await existingUser(db, flags);
      return view(user.id, await twilioAccount(sql, user.id));
    },
  },
  'twilio rotate': {
    usage: 'twilio rotate --user USER',
    // A new Auth Token: the old one stops working at once.
    run: async ({ db, sql }, flags) => {
      const user = await existingUser(db, flags);
      return view(user.id, await rotateTwilioAuthToken(sql, user.id));
    },
  },
};

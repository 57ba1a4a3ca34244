import type { Command } from '../command.ts';
import { deviceCommands } from './devices.ts';
import { keyCommands } from './keys.ts';
import { messageCommands } from './messages.ts';
import { quotaCommands } from './quota.ts';
import { twilioCommands } from './twilio.ts';
import { userCommands } from './users.ts';
import { webhookCommands } from './webhooks.ts';

/** Every command, by `noun verb`, in the order of `smsgw --help`. */
export const COMMANDS: Record<string, Command> = {
  ...userCommands,
  ...keyCommands,
  ...deviceCommands,
  ...quotaCommands,
  ...twilioCommands,
  ...messageCommands,
  ...webhookCommands,
};

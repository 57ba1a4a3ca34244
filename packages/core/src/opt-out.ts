import { isE164 } from './phone.ts';

/**
 * Opt-out keywords (docs/decisions.md, "Opt-out"): Twilio's default lists, so that recipients and
 * senders who know them get what they expect. The whole text counts, trimmed, in any case: "stop
 * texting me at night" is a message, not an opt-out.
 */
export const OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT'] as const;
export const OPT_IN_KEYWORDS = ['START', 'UNSTOP', 'YES'] as const;

/** The error of a message to a recipient on the user's opt-out list. */
export const RECIPIENT_OPTED_OUT = 'recipient opted out';

export type OptOutAction = 'opt_out' | 'opt_in';

const ACTIONS = new Map<string, OptOutAction>([...OPT_OUT_KEYWORDS.map((k) => [k, 'opt_out'] as const), ...OPT_IN_KEYWORDS.map((k) => [k, 'opt_in'] as const)]);

/** What an incoming SMS asks of the opt-out list, if anything. */
export function optOutAction(text: string): OptOutAction | null {
  return ACTIONS.get(text.trim().toUpperCase()) ?? null;
}

/**
 * What an incoming SMS asks of its sender's place on the list: only an E.164 sender can be listed
 * (sends go to E.164 numbers only). The statement that stores the SMS applies it only while the
 * user keeps the keywords on (`opt_out_keywords`).
 */
export function inboundOptOutAction(sms: { from: string; body: string }): OptOutAction | null {
  return isE164(sms.from) ? optOutAction(sms.body) : null;
}

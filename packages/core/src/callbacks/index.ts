import type { CallbackFormat, CallbackRenderer } from './callback-event.ts';
import { renderKannel } from './kannel.ts';
import { renderTwilio } from './twilio.ts';

export * from './callback-event.ts';
export * from './kannel.ts';
export * from './twilio.ts';
export * from './twilio-signature.ts';
export * from './twilio-incoming.ts';

/** The one table of callback renderers: a format is added here and nowhere else. */
export const CALLBACK_RENDERERS: Record<CallbackFormat, CallbackRenderer> = {
  kannel: renderKannel,
  twilio: renderTwilio,
};

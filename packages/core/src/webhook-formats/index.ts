/**
 * The formats of webhook endpoints: `smsgw`, smsgw's own (Standard Webhooks, webhook-event.ts and
 * webhook-signature.ts), and those of the client APIs smsgw speaks, each rendered by its own module
 * from the events the one engine writes and delivers. A format is added here and in the engine's
 * `requestOf`, nowhere else.
 */
export const WEBHOOK_FORMATS = ['smsgw', 'sms_gate'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export * from './sms-gate.ts';

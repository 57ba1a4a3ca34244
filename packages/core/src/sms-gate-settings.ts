import { appVersionAtLeast } from './app-version.ts';
import { AppError } from './errors.ts';

/**
 * The account's SMS Gate settings (SMS Gate's `DeviceSettings`, docs/compatibility.md): top-level
 * module names, snake_case fields inside, as upstream's server stores them (its
 * `modules/settings/utils.go` rules). What a client sends is read into that one spelling, merged or
 * replaced, and fed to the user's phones in the part that applies to them (`phoneSettings`).
 */
export type SmsGateSettings = Record<string, Record<string, unknown>>;

/** The fields of each module upstream keeps (its `rules`); any other key is dropped, as upstream drops it. */
export const SMS_GATE_SETTINGS_FIELDS = {
  encryption: ['passphrase'],
  gateway: ['cloud_url', 'private_token', 'notification_channel'],
  logs: ['lifetime_days'],
  messages: [
    'send_interval_min',
    'send_interval_max',
    'limit_period',
    'limit_value',
    'sim_selection_mode',
    'log_lifetime_days',
    'processing_order',
    'work_hours_enabled',
    'work_hours_start',
    'work_hours_end',
  ],
  ping: ['interval_seconds'],
  receiver: ['content_provider_enabled'],
  webhooks: ['internet_required', 'retry_count', 'signing_key'],
} as const satisfies Record<string, readonly string[]>;

/**
 * Upstream refuses these on its client API ("must not be used with Cloud Server", client-go's
 * `isdefault`): a server never gives a phone a passphrase, nor another server's address or token.
 */
export const REFUSED_SETTINGS = ['encryption.passphrase', 'gateway.cloud_url', 'gateway.private_token'] as const;

/** The first app version that knows the `Per30Minutes` limit period (older ones fail the whole import on it). */
export const PER_30_MINUTES_VERSION = '1.67';

type Module = keyof typeof SMS_GATE_SETTINGS_FIELDS;
const MODULES = Object.keys(SMS_GATE_SETTINGS_FIELDS) as Module[];
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const invalid = (message: string) => new AppError('invalid_request', `Invalid settings format: ${message}`);

/**
 * A body's fields in upstream's spelling: client-ts types them in camelCase (`signingKey`,
 * `limitPeriod`), which upstream silently drops; smsgw reads them as the snake_case field. Both
 * spellings of one field in one module is an error. Anything but an object of objects is left as
 * it is, for the schema to refuse.
 */
export function snakeSettings(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const module of MODULES) {
    const fields = out[module];
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) continue;
    const known = new Set<string>(SMS_GATE_SETTINGS_FIELDS[module]);
    const read: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(fields)) {
      const field = known.has(snake(name)) ? snake(name) : name;
      if (Object.hasOwn(read, field)) throw invalid(`${module}.${field} is given twice (${field} and its camelCase spelling)`);
      read[field] = value;
    }
    out[module] = read;
  }
  return out;
}

/**
 * The settings a checked body stores: upstream's modules and fields only, a null module or field
 * left out (a PATCH's null clears the field). The refused fields are refused here.
 */
export function keptSettings(body: Record<string, unknown>): SmsGateSettings {
  for (const path of REFUSED_SETTINGS) {
    const [module, field] = path.split('.') as [string, string];
    const value = (body[module] as Record<string, unknown> | null | undefined)?.[field];
    if (value !== undefined && value !== null) throw invalid(`${path} must not be set on this server`);
  }
  const kept: SmsGateSettings = {};
  for (const module of MODULES) {
    const fields = body[module] as Record<string, unknown> | null | undefined;
    if (fields == null) continue;
    kept[module] = Object.fromEntries(SMS_GATE_SETTINGS_FIELDS[module].filter((f) => f in fields).map((f) => [f, fields[f]]));
  }
  return kept;
}

/** `patch` over `current`, field by field (upstream's `appendMap`); a null field of the patch removes it. */
export function mergeSettings(current: SmsGateSettings, patch: SmsGateSettings): SmsGateSettings {
  const merged: SmsGateSettings = { ...current };
  for (const [module, fields] of Object.entries(patch)) merged[module] = { ...current[module], ...fields };
  return withoutNulls(merged);
}

/** Nulls and empty modules left out: what is stored and answered. */
export function withoutNulls(settings: SmsGateSettings): SmsGateSettings {
  const out: SmsGateSettings = {};
  for (const [module, fields] of Object.entries(settings)) {
    const kept = Object.entries(fields).filter(([, value]) => value !== null && value !== undefined);
    if (kept.length > 0) out[module] = Object.fromEntries(kept);
  }
  return out;
}

/**
 * The checks across fields, on the settings as they would be stored: a send interval whose
 * minimum exceeds its maximum makes the app drop both (client-go refuses it in one request; smsgw
 * also after a merge).
 */
export function checkSettings(settings: SmsGateSettings): void {
  const { send_interval_min: min, send_interval_max: max } = settings.messages ?? {};
  if (typeof min === 'number' && typeof max === 'number' && max < min) {
    throw invalid('messages.send_interval_max must be greater than or equal to messages.send_interval_min');
  }
}

/** What smsgw itself decides of a phone's settings. */
export interface PhoneSettingsOwn {
  /** The phone's own key for signing its webhooks to smsgw (never the account's). */
  signingKey: string;
  /** The ping interval smsgw's offline detection needs. */
  pingSeconds: number;
  /** smsgw's rate limit of the device, as the app's one limit (`phonePacing`); null: none set. */
  pacing: { limit_period: string; limit_value: number } | null;
  appVersion: string | null;
}

/** The `messages` fields fed to phones: all of upstream's (the app ignores those it does not know). */
const FED_MESSAGES = SMS_GATE_SETTINGS_FIELDS.messages;

/**
 * The settings an SMS Gate phone gets (`GET /mobile/v1/settings`; docs/devices.md, "Settings"):
 * smsgw's own values, and the account's where they apply to the phone and smsgw's do not win.
 * - `gateway.notification_channel` is always `SSE_ONLY` (smsgw has no Google push).
 * - `webhooks.signing_key` is the phone's own key; the account's `webhooks` settings govern the
 *   SMS Gate-format webhooks smsgw sends, so none of them reaches the phone.
 * - `ping.interval_seconds`: the account's when shorter than smsgw's, never longer (a rarer ping
 *   would have smsgw announce the phone offline).
 * - `messages`: the account's, but smsgw's rate limit of the device (which its dispatcher
 *   enforces) replaces the account's `limit_period` and `limit_value` when set; `Per30Minutes` goes
 *   to an app that predates it as `PerHour` with the same value (stricter, never looser).
 * - `logs` and `receiver` as the account has them; `encryption` never.
 */
export function phoneSettings(account: SmsGateSettings, own: PhoneSettingsOwn): Record<string, Record<string, unknown>> {
  const accountPing = account.ping?.interval_seconds;
  const ping = typeof accountPing === 'number' ? Math.min(accountPing, own.pingSeconds) : own.pingSeconds;
  const messages: Record<string, unknown> = Object.fromEntries(
    FED_MESSAGES.filter((f) => account.messages?.[f] !== undefined).map((f) => [f, account.messages![f]]),
  );
  if (own.pacing) {
    messages.limit_period = own.pacing.limit_period;
    messages.limit_value = own.pacing.limit_value;
  } else if (messages.limit_period === 'Per30Minutes' && !appVersionAtLeast(own.appVersion, PER_30_MINUTES_VERSION)) {
    messages.limit_period = 'PerHour';
  }
  return {
    gateway: { notification_channel: 'SSE_ONLY' },
    webhooks: { signing_key: own.signingKey },
    ping: { interval_seconds: ping },
    ...(Object.keys(messages).length > 0 && { messages }),
    ...(account.logs && { logs: account.logs }),
    ...(account.receiver && { receiver: account.receiver }),
  };
}

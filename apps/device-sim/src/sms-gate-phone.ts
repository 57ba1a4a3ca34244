import { createWriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { DeviceSimConfig } from '@smsgw/config';
import {
  ApiError,
  SmsGateClient,
  type SimCard,
  type SmsGateRegistration,
  type SmsGateSettings,
  type SmsGateWebhook,
  type SmsReceivedWebhook,
} from '@smsgw/client';
import type { DeviceSim } from './device-sim.ts';
import { loadRegistration, phoneSlots, saveRegistration, type StoredRegistration } from './phone-state.ts';
import { retry } from './retry.ts';
import { SentLog } from './sent-log.ts';
import { SmsGateInbox } from './sms-gate-inbox.ts';
import { SmsGateOutbox } from './sms-gate-outbox.ts';

// WorkManager's backoff of the app's background calls never grows past this in practice.
const MAX_RETRY_MS = 5 * 60_000;

export interface SmsGatePhone extends DeviceSim {
  readonly index: number;
  /** The device id from `POST /device`, or from the stored registration. */
  readonly deviceId: string | undefined;
  /** Incoming SMS whose webhook post got a 2xx. */
  readonly received: readonly SmsReceivedWebhook[];
  /** How often the event stream opened. */
  readonly connects: number;
  readonly settings: SmsGateSettings | undefined;
  readonly webhooks: readonly SmsGateWebhook[];
  /** A fake incoming SMS arrives now; resolves when its webhook posts succeeded or gave up. */
  receiveSms(from?: string, text?: string): Promise<void>;
}

/**
 * A simulated phone running the unmodified SMS Gate app with "Cloud server" pointed at smsgw and
 * "SSE only" chosen (real-devices.md §2, §2b). At start it registers once with its pairing (a code:
 * "Sign in by code"; a pairing token: "Sign up" with it as Private token) and keeps the registration
 * in `SIM_STATE_DIR`; later starts send `PATCH /device` (a 401 makes it register again) and at once
 * pull, read its settings and webhooks, then open the event stream. It pulls on every
 * `MessageEnqueued`, on every (re)connect and on a timer.
 */
export async function startSmsGatePhone(config: DeviceSimConfig, slot: { index: number; pairing?: string }, log: Logger): Promise<SmsGatePhone> {
  const { index, pairing } = slot;
  const stop = new AbortController();
  const { signal } = stop;
  const version = config.SIM_APP_VERSION;
  const client = new SmsGateClient(config.SIM_MOBILE_URL ?? `${config.SMSGW_URL.replace(/\/+$/, '')}/mobile/v1`, { appVersion: version });
  const ownNumber = `+1555099${String(index).padStart(4, '0')}`;
  const simCards: { simCards?: SimCard[] } = atLeast(version, '1.65.0')
    ? {
        simCards: [
          { slotIndex: 0, simNumber: 1, phoneNumber: `*******${ownNumber.slice(-4)}`, carrierName: '****bile', iccid: `***************${ownNumber.slice(-4)}` },
        ],
      }
    : {};
  const sentLog = new SentLog(config.SIM_LOG_FILE);
  const patchTimes = config.SIM_PATCH_TIMES_FILE ? createWriteStream(config.SIM_PATCH_TIMES_FILE, { flags: 'a' }) : undefined;
  const outbox = new SmsGateOutbox({
    client,
    log,
    sentLog,
    sendMs: config.SIM_SEND_MS,
    deliverMs: config.SIM_DELIVER_MS,
    failureRate: config.SIM_FAILURE_RATE,
    retryableFailureRate: config.SIM_RETRYABLE_FAILURE_RATE,
    tzOffset: config.SIM_TZ_OFFSET,
    retryMs: config.SIM_RETRY_MS,
    cancels: atLeast(version, '1.67.0'),
    ...(patchTimes && { onPatched: (ms: number) => patchTimes.write(`${ms.toFixed(1)}\n`) }),
  });
  const inbox = new SmsGateInbox({ client, log, ownNumber, tzOffset: config.SIM_TZ_OFFSET, retryMs: config.SIM_WEBHOOK_RETRY_MS, signal, appVersion: version });
  let registration: StoredRegistration | undefined = await loadRegistration(config.SIM_STATE_DIR, index);
  let settings: SmsGateSettings | undefined;
  let connects = 0;
  const background = { retries: Infinity, firstDelayMs: config.SIM_RETRY_MS, maxDelayMs: MAX_RETRY_MS, signal };
  const warn = (what: string) => (error: unknown) => log.warn({ err: error }, what);

  async function register(auth: SmsGateRegistration['auth']): Promise<void> {
    const device = await client.register({ auth, name: `Simulated/sim_phone_${index}`, ...simCards });
    registration = { id: device.id, token: device.token, login: device.login };
    await saveRegistration(config.SIM_STATE_DIR, index, registration);
    log.info({ deviceId: device.id }, 'registered');
  }

  /** `PATCH /device` until it succeeds; a 401, and only a 401, makes the app register again, always as "Sign up". */
  async function patchDevice(stored: StoredRegistration): Promise<void> {
    await retry(
      async () => {
        try {
          await client.patchDevice({ id: registration?.id ?? stored.id, ...simCards });
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 401)) throw error;
          log.warn('device token refused: registering again');
          await register(pairing?.startsWith('smsgw_pt_') ? { pairingToken: pairing } : 'none');
        }
      },
      { ...background, onError: warn('PATCH /device failed') },
    );
  }

  let pulling: AbortController | undefined;
  /** Each trigger cancels the pull in flight and starts another, as the app's unique pull work does. */
  function pull(): void {
    pulling?.abort();
    const controller = (pulling = new AbortController());
    const linked = AbortSignal.any([signal, controller.signal]);
    const order = atLeast(version, '1.46.0') ? 'lifo' : undefined;
    retry(() => client.pull(order, linked), { ...background, signal: linked, onError: warn('pull failed') }).then(
      (items) => !linked.aborted && outbox.receive(items),
      (error: unknown) => linked.aborted || warn('pull gave up')(error),
    );
  }

  function fetchSettings(): void {
    retry(() => client.settings(), { ...background, onError: warn('GET /settings failed') }).then(
      (value) => {
        settings = value;
        const key = value.webhooks?.signing_key;
        if (typeof key === 'string' && key !== '') inbox.signingKey = key;
        schedulePing(value.ping?.interval_seconds);
      },
      () => undefined,
    );
  }

  // The app's ping service: every interval_seconds a pull and a `system:ping` webhook. The app starts it
  // at its next start after the setting changed; the simulator at once.
  let pinger: NodeJS.Timeout | undefined;
  let pingSeconds: number | undefined;
  function schedulePing(seconds: unknown): void {
    const wanted = typeof seconds === 'number' && seconds > 0 ? seconds : undefined;
    if (wanted === pingSeconds) return;
    clearInterval(pinger);
    pingSeconds = wanted;
    pinger =
      wanted === undefined
        ? undefined
        : setInterval(() => {
            if (!registration) return;
            pull();
            void inbox.ping(registration.id);
          }, wanted * 1000);
  }

  function fetchWebhooks(): void {
    retry(() => client.webhooks(), { ...background, onError: warn('GET /webhooks failed') }).then(
      (value) => {
        inbox.webhooks = value;
      },
      () => undefined,
    );
  }

  function onEvent(name: string, data: unknown): void {
    // At debug level, what bench/phones.ts times wake-ups by (pino's `time` of the line).
    log.debug({ event: name }, 'event received');
    if (name === 'MessageEnqueued') pull();
    else if (name === 'SettingsUpdated') fetchSettings();
    else if (name === 'WebhooksUpdated') fetchWebhooks();
    else if (name === 'MessageCancelled' && atLeast(version, '1.67.0')) {
      const id = (data as { messageId?: unknown } | null)?.messageId;
      if (typeof id === 'string') outbox.cancel(id);
    }
  }

  /** The app's SSE manager: reconnects after 5 s (attempts 1-5), 30 s (6-10), then 60 s; an open stream resets the count. */
  async function stream(): Promise<void> {
    let attempts = 0;
    while (!signal.aborted) {
      try {
        await client.events(onEvent, signal, {
          onOpen: () => {
            attempts = 0;
            connects++;
            pull();
          },
        });
      } catch (error) {
        if (!signal.aborted) log.warn({ err: error }, 'event stream failed');
      }
      attempts++;
      const factor = attempts <= 5 ? 1 : attempts <= 10 ? 6 : 12;
      await sleep(config.SIM_RECONNECT_MS * factor, undefined, { signal }).catch(() => undefined);
    }
  }

  const gateway = (async () => {
    const stored = registration;
    if (stored) {
      client.token = stored.token;
      const patched = patchDevice(stored);
      pull();
      fetchSettings();
      fetchWebhooks();
      await patched;
    } else {
      if (!pairing) throw new Error(`phone ${index} has neither a stored registration nor a pairing`);
      // The first-start dialog. The pull, settings and webhooks workers started with it found no
      // token and did nothing: the stream's first events fetch them (real-devices.md §2, "Wake-up").
      await retry(() => register(/^\d+$/.test(pairing) ? { code: pairing } : { pairingToken: pairing }), {
        ...background,
        onError: warn('registration failed'),
      });
    }
    await stream();
  })().catch((error: unknown) => {
    if (!signal.aborted) log.error({ err: error }, 'phone stopped');
  });

  const poller = setInterval(() => registration && pull(), config.SIM_POLL_SECONDS * 1000);
  const inbound =
    config.SIM_INBOUND_EVERY_MS > 0 ? setInterval(() => registration && void inbox.smsArrived(registration.id), config.SIM_INBOUND_EVERY_MS) : undefined;
  log.info({ url: client.baseUrl, index, registered: registration !== undefined }, 'SMS Gate phone started');

  return {
    index,
    sent: outbox.sent,
    received: inbox.received,
    get deviceId() {
      return registration?.id;
    },
    get connects() {
      return connects;
    },
    get settings() {
      return settings;
    },
    get webhooks() {
      return inbox.webhooks;
    },
    async receiveSms(from, text) {
      if (!registration) throw new Error('the phone is not registered yet');
      await inbox.smsArrived(registration.id, from, text);
    },
    async close() {
      stop.abort();
      clearInterval(poller);
      clearInterval(inbound);
      clearInterval(pinger);
      await gateway;
      await outbox.close();
      await inbox.close();
      await sentLog.close();
      await new Promise<void>((resolve) => (patchTimes ? patchTimes.end(resolve) : resolve()));
    },
  };
}

/** One phone per pairing, or per stored registration (phone-state.ts). */
export async function startSmsGatePhones(config: DeviceSimConfig, log: Logger): Promise<SmsGatePhone[]> {
  const slots = await phoneSlots(config);
  const gap = config.SIM_START_SPREAD_MS / slots.length;
  return Promise.all(
    slots.map(async (slot, i) => {
      if (gap > 0) await sleep(i * gap);
      return startSmsGatePhone(config, slot, log.child({ phone: slot.index }));
    }),
  );
}

function atLeast(version: string, wanted: string): boolean {
  const a = version.split('.').map(Number);
  const b = wanted.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

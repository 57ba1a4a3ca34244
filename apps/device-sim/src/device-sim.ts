import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { DeviceSimConfig } from '@smsgw/config';
import { DeviceClient, type ClaimedMessage, type HeartbeatHealth, type Report } from '@smsgw/client';
import { SeenIds } from './seen-ids.ts';
import { SentLog } from './sent-log.ts';

// Reports go out in batches: at most this many, at least this often.
const REPORT_BATCH = 500;
const REPORT_EVERY_MS = 50;
/** What every heartbeat tells of the simulated device: on mains, with good service. */
const SIM_HEALTH: HeartbeatHealth = { battery_level: 100, charging: true, signal_dbm: -67, network: 'registered' };
// A handled id is remembered this long: far beyond the sending lease, after which smsgw never offers it again.
export const REMEMBER_IDS_MS = 6 * 3600_000;

export interface DeviceSim {
  /** Ids of the messages this simulator sent, in order. */
  readonly sent: readonly string[];
  close(): Promise<void>;
}

/**
 * A simulated phone that speaks smsgw's native device protocol: it keeps the event stream open,
 * claims on every wake-up (and polls as a safety net), "sends" each message, and reports `sent`
 * and later `delivered` (or `failed`, at the configured rate). A claim offers the device's
 * messages again until it reports about them, so the phone remembers the ids it handled and never
 * sends one twice. Every send is recorded, so tests can prove that no message was sent twice.
 */
export async function startDeviceSim(config: DeviceSimConfig, log: Logger): Promise<DeviceSim> {
  if (!config.DEVICE_TOKEN) throw new Error('DEVICE_TOKEN is required for a native device simulator');
  const client = new DeviceClient(config.SMSGW_URL, config.DEVICE_TOKEN);
  const stop = new AbortController();
  const sent: string[] = [];
  const handled = new SeenIds(REMEMBER_IDS_MS);
  const sentLog = new SentLog(config.SIM_LOG_FILE);
  const pendingReports: Report[] = [];
  // Delivery reports still to come, by their timer.
  const deliveries = new Map<NodeJS.Timeout, string>();

  let claiming: Promise<void> | undefined;
  let again = false;
  /**
   * Claims until a claim offers no id not handled yet (the others are offers whose reports are
   * still on their way: claiming on would spin); a wake-up during a claim round runs one more round.
   */
  function claimAll(): void {
    if (claiming) {
      again = true;
      return;
    }
    claiming = (async () => {
      do {
        again = false;
        for (;;) {
          if (stop.signal.aborted) return;
          let batch: ClaimedMessage[];
          try {
            batch = await client.claim({ limit: config.SIM_CLAIM_LIMIT });
          } catch (error) {
            if (!stop.signal.aborted) log.warn({ err: error }, 'claim failed');
            return;
          }
          const fresh = batch.filter((message) => handled.add(message.id, true));
          if (fresh.length === 0) break;
          for (const message of fresh) await sendOne(message);
        }
      } while (again);
    })().finally(() => {
      claiming = undefined;
    });
  }

  async function sendOne(message: ClaimedMessage): Promise<void> {
    if (config.SIM_SEND_MS > 0) await sleep(config.SIM_SEND_MS);
    const now = new Date().toISOString();
    if (Math.random() < config.SIM_RETRYABLE_FAILURE_RATE) {
      // Never sent: smsgw may give it to another device, so it is not in `sent`.
      pendingReports.push({ id: message.id, status: 'failed', error: 'Simulated failure before sending: no service', retryable: true, at: now });
      return;
    }
    if (Math.random() < config.SIM_FAILURE_RATE) {
      pendingReports.push({ id: message.id, status: 'failed', error: 'Simulated failure: no network', at: now });
      return;
    }
    sent.push(message.id);
    // The simulated phone has every SIM slot smsgw may name; without one it sends from the first.
    sentLog.write({ id: message.id, to: message.to, at: now, sim: message.sim_number ?? 1 });
    pendingReports.push({ id: message.id, status: 'sent', at: now });
    if (config.SIM_DELIVER_MS === 0) deliver(message.id);
    else {
      const timer = setTimeout(() => {
        deliveries.delete(timer);
        deliver(message.id);
      }, config.SIM_DELIVER_MS);
      deliveries.set(timer, message.id);
    }
  }

  function deliver(id: string): void {
    pendingReports.push({ id, status: 'delivered', at: new Date().toISOString() });
  }

  let flushing = false;
  async function flushReports(): Promise<void> {
    if (flushing || pendingReports.length === 0) return;
    flushing = true;
    const batch = pendingReports.splice(0, REPORT_BATCH);
    try {
      const result = await client.report(batch);
      if (result.rejected.length > 0) log.warn({ rejected: result.rejected.length }, 'reports rejected');
    } catch (error) {
      // Reports are idempotent: put them back and send them again.
      pendingReports.unshift(...batch);
      if (!stop.signal.aborted) log.warn({ err: error }, 'report failed');
    } finally {
      flushing = false;
    }
  }
  const reporter = setInterval(() => void flushReports(), REPORT_EVERY_MS);
  const poller = setInterval(() => {
    claimAll();
    client.heartbeat(SIM_HEALTH).catch((error: unknown) => log.warn({ err: error }, 'heartbeat failed'));
  }, config.SIM_POLL_SECONDS * 1000);

  const streaming = (async () => {
    let backoff = 500;
    while (!stop.signal.aborted) {
      try {
        await client.events((event) => {
          backoff = 500;
          if (event === 'wakeup') claimAll();
        }, stop.signal);
      } catch (error) {
        if (!stop.signal.aborted) log.warn({ err: error }, 'event stream lost');
      }
      if (!stop.signal.aborted) await sleep(backoff, undefined, { signal: stop.signal }).catch(() => undefined);
      backoff = Math.min(backoff * 2, 10_000);
    }
  })();
  claimAll();
  log.info({ url: config.SMSGW_URL }, 'device simulator started');

  return {
    sent,
    async close() {
      stop.abort();
      clearInterval(poller);
      await streaming;
      await claiming;
      // Deliver what is due now, then send the last reports.
      for (const [timer, id] of deliveries) {
        clearTimeout(timer);
        deliver(id);
      }
      clearInterval(reporter);
      while (pendingReports.length > 0 && !flushing) {
        const before = pendingReports.length;
        await flushReports();
        if (pendingReports.length >= before) break;
      }
      await sentLog.close();
    },
  };
}

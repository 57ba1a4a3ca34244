import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ModemAgentConfig } from '@smsgw/config';
import { DeviceClient, type HeartbeatHealth } from '@smsgw/client';
import { Inbox } from './inbox.ts';
import { Modem } from './modem.ts';
import { Outbox } from './outbox.ts';
import { decodePdu } from './pdu-codec.ts';
import { SubmissionState } from './submission-state.ts';

export interface ModemAgent {
  close(): Promise<void>;
}

/** Where the agent keeps its submissions unless MODEM_STATE_FILE says otherwise. */
export function defaultStateFile(port: string): string {
  return `modem-${basename(port)}.state.json`;
}

/**
 * A USB modem as an smsgw device (../shared/spec/real-devices.md §5): the modem driver on one
 * side, smsgw's native device protocol on the other. It claims on every wake-up of the event
 * stream and every MODEM_POLL_SECONDS, reads what is on the SIM whenever the modem is
 * (re)initialised, and checks on each poll that the modem still answers.
 */
export function startModemAgent(config: ModemAgentConfig, log: Logger): ModemAgent {
  const client = new DeviceClient(config.SMSGW_URL, config.SMSGW_DEVICE_TOKEN);
  const state = SubmissionState.load(config.MODEM_STATE_FILE ?? defaultStateFile(config.MODEM_PORT));
  state.prune();
  const stop = new AbortController();
  let inbox: Inbox | undefined;
  let outbox: Outbox | undefined;

  const modem = new Modem({
    port: config.MODEM_PORT,
    baud: config.MODEM_BAUD,
    pin: config.MODEM_PIN,
    commandTimeoutMs: config.MODEM_COMMAND_TIMEOUT_MS,
    sendTimeoutMs: config.MODEM_SEND_TIMEOUT_MS,
    retryMaxMs: config.MODEM_RETRY_MAX_MS,
    log,
    onUnsolicited(code) {
      if (code.kind === 'cmti' || code.kind === 'cdsi') void inbox?.readIndex(code.index);
      else if (code.kind === 'cds') {
        const reference = statusReportOf(code.pdu);
        if (reference instanceof Error) log.warn({ pdu: code.pdu, reason: reference.message }, 'unreadable status report, skipped');
        // A +CDS read together with the +CMGS that gave its reference runs before the submission has
        // recorded that reference (its continuation is a microtask): handle the report after it.
        else setImmediate(() => outbox?.onStatusReport(reference.reference, reference.status));
      }
    },
    onReady() {
      void inbox?.readStored();
      void outbox?.kick();
    },
  });
  outbox = new Outbox(client, modem, state, log, config.MODEM_RETRY_MAX_MS);
  inbox = new Inbox(client, modem, log, (reference, status) => outbox?.onStatusReport(reference, status));
  modem.start();

  const poller = setInterval(() => {
    void outbox.kick();
    void inbox.retry();
    void pollModem();
  }, config.MODEM_POLL_SECONDS * 1000);

  /**
   * A plain AT notices a silent modem; then its signal, registration and SIM go to smsgw in a
   * heartbeat. A modem that is not ready (unplugged, being opened again, SIM refused) sends nothing:
   * the agent says so, as no service, while its event stream keeps the device connected.
   */
  async function pollModem(): Promise<void> {
    let health: HeartbeatHealth = { signal_dbm: null, network: 'none' };
    if (modem.ready) {
      try {
        await modem.ping();
        health = await modem.networkHealth();
      } catch (error) {
        log.warn({ reason: (error as Error).message }, 'modem did not answer');
      }
    }
    await client.heartbeat(health).catch((error: unknown) => log.warn({ reason: (error as Error).message }, 'heartbeat failed'));
  }

  const streaming = (async () => {
    let pause = 250;
    while (!stop.signal.aborted) {
      try {
        await client.events((event) => {
          pause = 250;
          if (event === 'wakeup') void outbox.kick();
        }, stop.signal);
      } catch (error) {
        if (!stop.signal.aborted) log.warn({ reason: (error as Error).message }, 'event stream lost');
      }
      await sleep(pause, undefined, { signal: stop.signal }).catch(() => undefined);
      pause = Math.min(pause * 2, config.MODEM_RETRY_MAX_MS);
    }
  })();
  log.info({ port: config.MODEM_PORT, url: config.SMSGW_URL }, 'modem agent started');

  return {
    async close() {
      stop.abort();
      clearInterval(poller);
      await streaming;
      await modem.stop();
      // The last reports, once: a report that does not get through is sent again after the restart.
      await outbox.close();
    },
  };
}

function statusReportOf(pdu: string): { reference: number; status: number } | Error {
  const decoded = decodePdu(pdu);
  if (decoded instanceof Error) return decoded;
  return decoded.kind === 'report' ? decoded : new Error('+CDS carried no status report');
}

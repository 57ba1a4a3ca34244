import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig, ModemAgentConfigSchema } from '@smsgw/config';
import { createTestUser, startTestApi, type TestApi, type TestUser } from '@smsgw/api/testing';
import type { Dispatcher } from '@smsgw/dispatcher';
import { startTestDispatcher } from '@smsgw/dispatcher/testing';
import { startModemAgent, type ModemAgent } from '../modem-agent.ts';
import { FakeModem, PtyPair, type FakeModemOptions } from './fake-modem.ts';

/**
 * One test's modem: a user with a device on the shared API, a socat pty pair with a fake modem on one side, and the agent on the other, in this
 * process. The timeouts are short so that the robustness tests run in seconds.
 */
export interface Harness {
  api: TestApi;
  user: TestUser;
  pty: PtyPair;
  modem: FakeModem;
  agent: ModemAgent | undefined;
  stateFile: string;
  /** Logged lines of the agent (pino objects). */
  logs: { msg: string; [key: string]: unknown }[];
  startAgent(env?: Record<string, string>): ModemAgent;
  stopAgent(): Promise<void>;
  /** Stops socat (the ports vanish) and starts it again with a fresh fake modem. */
  replug(options?: FakeModemOptions): Promise<FakeModem>;
  close(): Promise<void>;
}

/** The API on a real port and a dispatcher, shared by the tests of a file (each test has a user of its own). */
export interface World {
  api: TestApi;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startWorld(): Promise<World> {
  const api = await startTestApi();
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const dispatcher: Dispatcher = await startTestDispatcher(api);
  return {
    api,
    baseUrl: `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`,
    async close() {
      await dispatcher.close();
      await api.close();
    },
  };
}

export async function startHarness(world: World, options: FakeModemOptions = {}): Promise<Harness> {
  const { api, baseUrl } = world;
  const user = await createTestUser(api.db);
  const dir = await mkdtemp(join(tmpdir(), 'smsgw-modem-'));
  const pty = new PtyPair(dir);
  await pty.start();
  const logs: Harness['logs'] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line)) });

  const harness: Harness = {
    api,
    user,
    pty,
    modem: await FakeModem.open(pty.modem, options),
    agent: undefined,
    stateFile: join(dir, 'state.json'),
    logs,
    startAgent(env = {}) {
      const config = loadConfig(ModemAgentConfigSchema, {
        MODEM_PORT: pty.agent,
        SMSGW_URL: baseUrl,
        SMSGW_DEVICE_TOKEN: user.devices[0]!.token,
        MODEM_STATE_FILE: harness.stateFile,
        MODEM_COMMAND_TIMEOUT_MS: '1000',
        MODEM_SEND_TIMEOUT_MS: '2000',
        MODEM_POLL_SECONDS: '1',
        MODEM_RETRY_MAX_MS: '500',
        ...env,
      });
      harness.agent = startModemAgent(config, log);
      return harness.agent;
    },
    async stopAgent() {
      await harness.agent?.close();
      harness.agent = undefined;
    },
    async replug(modemOptions = options) {
      await harness.modem.close();
      await pty.stop();
      await pty.start();
      harness.modem = await FakeModem.open(pty.modem, modemOptions);
      return harness.modem;
    },
    async close() {
      await harness.stopAgent();
      await harness.modem.close();
      await pty.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/**
 * The native simulator against a tiny local server that speaks the native device protocol and
 * keeps offering every message (as smsgw does while the reports are on their way): the phone
 * must send each id once, and stop claiming when a claim brings nothing new.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeviceSimConfigSchema, loadConfig } from '@smsgw/config';
import type { ClaimedMessage, Report } from '@smsgw/client';
import { startDeviceSim, type DeviceSim } from './device-sim.ts';

let offered: ClaimedMessage[];
let claims: number;
let reports: Report[];
let streams: ServerResponse[];
let baseUrl: string;
let sim: DeviceSim | undefined;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const path = new URL(req.url!, 'http://x').pathname;
    const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/api/v1/device/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      streams.push(res);
      wakeUp();
    } else if (path === '/api/v1/device/messages') {
      claims++;
      reply(200, { messages: offered });
    } else if (path === '/api/v1/device/reports') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { reports: Report[] };
      reports.push(...body.reports);
      reply(202, { accepted: body.reports.length, rejected: [] });
    } else if (path === '/api/v1/device/heartbeat') reply(200, { status: 'ok', server_time: new Date().toISOString() });
    else reply(404, { error: 'not_found', message: 'no such route' });
  });
});

function wakeUp(): void {
  for (const stream of streams) stream.write('event: wakeup\ndata: {}\n\n');
}

function message(id: string): ClaimedMessage {
  const now = Date.now();
  return {
    id,
    to: '+15550001111',
    message: `text of ${id}`,
    created_at: new Date(now).toISOString(),
    valid_until: new Date(now + 3600_000).toISOString(),
    sim_number: null,
  };
}

beforeEach(async () => {
  offered = [];
  claims = 0;
  reports = [];
  streams = [];
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function start(): Promise<DeviceSim> {
  const config = loadConfig(DeviceSimConfigSchema, {
    SMSGW_URL: baseUrl,
    DEVICE_TOKEN: 'smsgw_dt_test',
    SIM_SEND_MS: '0',
    SIM_DELIVER_MS: '0',
    SIM_POLL_SECONDS: '3600',
    LOG_LEVEL: 'silent',
  });
  return startDeviceSim(config, pino({ level: 'silent' }));
}

/** The claim count once no claim has come for 200 ms (a simulator that spins never gets there: the test times out). */
async function quiet(): Promise<number> {
  for (;;) {
    const seen = claims;
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (claims === seen) return seen;
  }
}

const statuses = (id: string) => reports.filter((r) => r.id === id).map((r) => r.status);

describe('native device simulator', () => {
  it('sends each offered id once although every claim offers it again, and stops claiming when nothing is new', async () => {
    offered = [message('a'), message('b')];
    sim = await start();
    await vi.waitFor(() => expect(statuses('b')).toEqual(['sent', 'delivered']));
    // The same ids again, with a fresh one first (as the fresh-first order offers them).
    offered = [message('c'), message('a'), message('b')];
    const before = claims;
    wakeUp();
    await vi.waitFor(() => expect(statuses('c')).toEqual(['sent', 'delivered']));
    // The claim that brought `c`, then one that brought nothing new, and there it stops.
    await vi.waitFor(() => expect(claims).toBeGreaterThanOrEqual(before + 2));
    // A wake-up that came during a round runs one more: count from when the rounds have ended.
    const settled = await quiet();
    wakeUp();
    await vi.waitFor(() => expect(claims).toBe(settled + 1));
    // A loop that claimed on while offers came back would have claimed thousands of times.
    expect(claims).toBeLessThan(10);
    expect(sim.sent).toEqual(['a', 'b', 'c']);
    for (const id of ['a', 'b', 'c']) expect(statuses(id)).toEqual(['sent', 'delivered']);
  });

  it('refuses to start without a device token', async () => {
    const config = loadConfig(DeviceSimConfigSchema, { SMSGW_URL: baseUrl, LOG_LEVEL: 'silent' });
    await expect(startDeviceSim(config, pino({ level: 'silent' }))).rejects.toThrow(/DEVICE_TOKEN/);
  });
});

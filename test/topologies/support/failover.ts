import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { expect, vi } from 'vitest';
import { numbers, summarizeLog } from '../../faults/support/fixture.ts';
import { deviceFailures, sendUnderLoad, type TopologyGateway } from './gateway.ts';

/** How long after the promotion a request may still be answered 503 (issue 28). */
export const RECOVERY_MS = 20_000;

export interface Failover {
  /** The messages accepted before, during and after. */
  ids: string[];
  /** A send made as the primary died, and the same send (same Idempotency-Key) after the promotion: their message ids. */
  retried: { during: string[]; after: string[] };
  killedAt: number;
  promotedAt: number;
}

/**
 * Sends under load, kills Redis's primary (`kill`) the moment it holds a report job that no
 * dispatcher took yet (they are frozen with SIGSTOP meanwhile: the job exists only in Redis, and
 * only on the primary as long as the replica lags), waits for a replica to take its place
 * (`waitForPromotion`), and keeps sending for a few seconds more.
 */
export async function failoverUnderLoad(
  gateway: TopologyGateway,
  redis: { primaryPort: number; reportJobs: string; kill: () => Promise<void>; waitForPromotion: () => Promise<void> },
  dispatchers: string[],
): Promise<Failover> {
  let stopAt = Number.POSITIVE_INFINITY;
  const load = sendUnderLoad(gateway, { lanes: 2, size: 10, everyMs: 100, stop: () => Date.now() > stopAt });
  await gateway.waitForDelivered(100, 30_000);
  for (const name of dispatchers) gateway.cluster.signal(name, 'SIGSTOP');
  // One connection for the polls (a connection each would leave thousands of ports in TIME_WAIT).
  const primary = new Redis(redis.primaryPort, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null });
  primary.on('error', () => undefined);
  try {
    const before = await primary.llen(redis.reportJobs);
    const deadline = Date.now() + 10_000;
    while ((await primary.llen(redis.reportJobs)) <= before) {
      if (Date.now() > deadline) throw new Error('no report job reached Redis within 10 s of freezing the dispatchers');
      await sleep(5);
    }
  } finally {
    primary.disconnect();
  }
  const killedAt = Date.now();
  await redis.kill();
  for (const name of dispatchers) gateway.cluster.signal(name, 'SIGCONT');
  const retry = { recipients: numbers(1_000_000, 5), idempotencyKey: 'sent-as-the-primary-died' };
  const during = gateway.send(retry.recipients, retry);
  await redis.waitForPromotion();
  const promotedAt = Date.now();
  stopAt = promotedAt + 5000;
  const after = await gateway.send(retry.recipients, retry);
  return { ids: [...(await load), ...(await during)], retried: { during: await during, after }, killedAt, promotedAt };
}

/**
 * What a failover may cost (issue 28): nothing lost, nothing sent twice, no answer but 2xx and,
 * from the kill to RECOVERY_MS after the promotion, 503 with Retry-After; every send accepted by
 * then when retried with its Idempotency-Key; the processes recovered without a restart.
 */
export async function expectFailoverGuarantees(gateway: TopologyGateway, { ids, retried, killedAt, promotedAt }: Failover, processes: string[]): Promise<void> {
  expect(retried.after).toEqual(retried.during);
  await gateway.waitForDelivered(ids.length, 60_000);
  const sent = await gateway.sent();
  expect(new Set(ids).size).toBe(ids.length);
  expect(sent.length).toBe(ids.length);
  expect(new Set(sent)).toEqual(new Set(ids));
  expect(await gateway.counts()).toEqual({ delivered: ids.length });

  const refused = gateway.answers.filter((a) => a.status !== 200 && a.status !== 202);
  expect(refused.filter((a) => a.status !== 503 || a.retryAfter === null)).toEqual([]);
  expect(refused.filter((a) => a.at < killedAt || a.at > promotedAt + RECOVERY_MS)).toEqual([]);
  const lastAccepted = new Map(gateway.answers.filter((a) => a.status === 200).map((a) => [a.key, a.at]));
  expect([...lastAccepted.values()].filter((at) => at > promotedAt + RECOVERY_MS)).toEqual([]);
  expect(deviceFailures(gateway.cluster.output('devices')).filter((status) => status !== '503')).toEqual([]);

  // Recovered in place: every process still runs, the API is ready, a new send goes out at once.
  for (const name of processes) expect(gateway.cluster.processes.get(name)?.exitCode, name).toBeNull();
  await vi.waitFor(async () => expect((await fetch(`${gateway.cluster.baseUrl}/ready`)).status).toBe(200), { timeout: 10_000, interval: 200 });
  const started = Date.now();
  const after = await gateway.send(['+15559999999'], { retryForMs: 1 });
  await gateway.waitForDelivered(ids.length + 1, 10_000);
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(after).toHaveLength(1);
  // No stack or unexpected error reached a log; what a failover costs is logged at warn, once per burst.
  await sleep(200);
  for (const name of processes) {
    const log = summarizeLog(gateway.cluster.output(name));
    expect(log.raw, name).toEqual([]);
    expect(log.errors, name).toEqual([]);
  }
}

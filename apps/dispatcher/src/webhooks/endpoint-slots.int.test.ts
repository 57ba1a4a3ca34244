import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { deletePrefix } from '@smsgw/queue';
import { EndpointSlots } from './endpoint-slots.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `smsgw-test-slots-${randomBytes(4).toString('hex')}`;
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const parked = (webhookId: string) => redis.zrange(`${prefix}:webhook-parked:${webhookId}`, 0, -1);
const holders = (webhookId: string) => redis.zrange(`${prefix}:webhook-slots:${webhookId}`, 0, -1);

describe('EndpointSlots', () => {
  it('gives at most `limit` slots; the next delivery is parked, and a holder takes the parked ones oldest first before giving its slot back', async () => {
    const slots = new EndpointSlots(redis, prefix, 2, 60_000);
    const endpoint = randomUUID();
    expect(await slots.acquire(endpoint, 't1', 'd1')).toBe(true);
    expect(await slots.acquire(endpoint, 't2', 'd2')).toBe(true);
    expect(await slots.acquire(endpoint, 't3', 'd3')).toBe(false);
    expect(await slots.acquire(endpoint, 't4', 'd4')).toBe(false);
    // Parked again (a job that ran twice): no second entry.
    expect(await slots.acquire(endpoint, 't5', 'd3')).toBe(false);
    expect(await parked(endpoint)).toEqual(['d3', 'd4']);

    expect(await slots.next(endpoint, 't1')).toBe('d3');
    expect(await slots.next(endpoint, 't1')).toBe('d4');
    expect((await holders(endpoint)).sort()).toEqual(['t1', 't2']);
    expect(await slots.next(endpoint, 't1')).toBeUndefined();
    expect(await holders(endpoint)).toEqual(['t2']);
    expect(await slots.acquire(endpoint, 't6', 'd6')).toBe(true);
  });

  it('keeps endpoints apart', async () => {
    const slots = new EndpointSlots(redis, prefix, 1, 60_000);
    const [a, b] = [randomUUID(), randomUUID()];
    expect(await slots.acquire(a, 't1', 'd1')).toBe(true);
    expect(await slots.acquire(b, 't2', 'd2')).toBe(true);
    expect(await slots.acquire(a, 't3', 'd3')).toBe(false);
    expect(await parked(b)).toEqual([]);
  });

  it('lets the slot of a holder that died lapse after leaseMs; the delivery it had in hand goes first, then what was parked', async () => {
    const slots = new EndpointSlots(redis, prefix, 1, 200);
    const endpoint = randomUUID();
    expect(await slots.acquire(endpoint, 'dead', 'd1')).toBe(true);
    expect(await slots.acquire(endpoint, 't2', 'd2')).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await slots.acquire(endpoint, 't3', 'd3')).toBe(true);
    expect(await holders(endpoint)).toEqual(['t3']);
    expect(await slots.next(endpoint, 't3')).toBe('d1');
    expect(await slots.next(endpoint, 't3')).toBe('d2');
  });

  it('takes a delivery that gets a slot off the parked ones (its job came back), so it is not served twice', async () => {
    const slots = new EndpointSlots(redis, prefix, 1, 60_000);
    const endpoint = randomUUID();
    expect(await slots.acquire(endpoint, 't1', 'd1')).toBe(true);
    expect(await slots.acquire(endpoint, 't2', 'd2')).toBe(false);
    expect(await slots.next(endpoint, 't1')).toBe('d2');
    expect(await slots.next(endpoint, 't1')).toBeUndefined();
    expect(await slots.acquire(endpoint, 't3', 'd4')).toBe(true);
    expect(await slots.acquire(endpoint, 't4', 'd5')).toBe(false);
    expect(await slots.next(endpoint, 't3', true)).toBe('d5');
    expect(await slots.acquire(endpoint, 't5', 'd5')).toBe(true);
    expect(await parked(endpoint)).toEqual([]);
  });

  it('gives the slot back on giveUp even with deliveries parked, handing the oldest to the caller', async () => {
    const slots = new EndpointSlots(redis, prefix, 1, 60_000);
    const endpoint = randomUUID();
    expect(await slots.acquire(endpoint, 't1', 'd1')).toBe(true);
    expect(await slots.acquire(endpoint, 't2', 'd2')).toBe(false);
    expect(await slots.acquire(endpoint, 't3', 'd3')).toBe(false);
    expect(await slots.next(endpoint, 't1', true)).toBe('d2');
    expect(await holders(endpoint)).toEqual([]);
    expect(await parked(endpoint)).toEqual(['d3']);
  });

  it('wakes an endpoint whose holders died: once their slots lapse, its oldest parked delivery is handed out, and only then', async () => {
    const slots = new EndpointSlots(redis, prefix, 1, 200);
    const [orphaned, served] = [randomUUID(), randomUUID()];
    expect(await slots.acquire(orphaned, 'dead', 'd1')).toBe(true);
    expect(await slots.acquire(orphaned, 't2', 'd2')).toBe(false);
    expect(await slots.acquire(orphaned, 't3', 'd3')).toBe(false);

    // The holder may still be working: nothing is woken yet.
    expect((await slots.wakeOrphans()).filter((w) => w.webhookId === orphaned)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await slots.acquire(served, 'alive', 'd4')).toBe(true);
    expect(await slots.acquire(served, 't5', 'd5')).toBe(false);
    const woken = await slots.wakeOrphans();
    expect(woken.filter((w) => w.webhookId === orphaned)).toEqual([{ id: 'd1', webhookId: orphaned }]);
    // An endpoint with a live holder is left to it.
    expect(woken.filter((w) => w.webhookId === served)).toEqual([]);

    // The woken delivery's job takes the slot and serves the rest, the dead holder's d1 first
    // (it may not have gone out); then the endpoint is forgotten.
    expect(await slots.acquire(orphaned, 't6', 'd1')).toBe(true);
    expect(await slots.next(orphaned, 't6')).toBe('d2');
    expect(await slots.next(orphaned, 't6')).toBe('d3');
    expect(await slots.next(orphaned, 't6')).toBeUndefined();
    expect(await redis.sismember(`${prefix}:webhook-parked-endpoints`, orphaned)).toBe(0);
    expect(await redis.sismember(`${prefix}:webhook-parked-endpoints`, served)).toBe(1);
  });

  it('wakes the last parked delivery a holder took before it died: the endpoint stays watched while a slot has one in hand', async () => {
    const slots = new EndpointSlots(redis, prefix, 1, 200);
    const endpoint = randomUUID();
    expect(await slots.acquire(endpoint, 'holder', 'd1')).toBe(true);
    expect(await slots.acquire(endpoint, 't2', 'd2')).toBe(false);
    // The holder delivers d1, takes d2 (the last one parked) and is killed before d2 goes out.
    expect(await slots.next(endpoint, 'holder')).toBe('d2');
    expect(await redis.sismember(`${prefix}:webhook-parked-endpoints`, endpoint)).toBe(1);
    expect((await slots.wakeOrphans()).filter((w) => w.webhookId === endpoint)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the lease is what is tested
    expect((await slots.wakeOrphans()).filter((w) => w.webhookId === endpoint)).toEqual([{ id: 'd2', webhookId: endpoint }]);
    // Its job serves it, and the endpoint is forgotten once nothing is parked or in hand.
    expect(await slots.acquire(endpoint, 't3', 'd2')).toBe(true);
    expect(await slots.next(endpoint, 't3')).toBeUndefined();
    expect(await redis.sismember(`${prefix}:webhook-parked-endpoints`, endpoint)).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { WakeupHub } from './wakeups.ts';

describe('WakeupHub waiter', () => {
  it('answers at once when the wake-up came between listening and waiting', async () => {
    const hub = new WakeupHub();
    const waiter = hub.waiter('d1');
    hub.wake('d1');
    await expect(waiter.wait(10_000)).resolves.toBe(true);
    waiter.cancel();
  });

  it('answers false at the timeout, and true at a wake-up of its own device only', async () => {
    const hub = new WakeupHub();
    const waiter = hub.waiter('d1');
    await expect(waiter.wait(20)).resolves.toBe(false);
    const waiting = waiter.wait(10_000);
    hub.wake('d2');
    hub.wake('d1');
    await expect(waiting).resolves.toBe(true);
    waiter.cancel();
    expect(hub.connectedDevices).toBe(0);
  });

  it('ends every wait in progress, and every later one at once, when closed', async () => {
    const hub = new WakeupHub();
    const waiting = [hub.waiter('d1').wait(60_000), hub.waiter('d2').wait(60_000)];
    hub.close();
    await expect(Promise.all(waiting)).resolves.toEqual([false, false]);
    const started = Date.now();
    await expect(hub.waiter('d3').wait(60_000)).resolves.toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('ends a wait when its request goes away', async () => {
    const hub = new WakeupHub();
    const gone = new AbortController();
    const waiting = hub.waiter('d1').wait(60_000, gone.signal);
    gone.abort();
    await expect(waiting).resolves.toBe(false);
  });
});

import { describe, expect, it, vi } from 'vitest';
import { createTestUser, uniquePhone as phone, type TestApi, type TestUser } from '@smsgw/api/testing';
import { deliveries, report, toSending, webhookTestbed, type Receiver } from '../testing/webhook-fixtures.ts';

/**
 * Per-send callbacks (Kannel's dlr-url) in the webhook engine: written by the transitions' own
 * statements for the events the mask selects, rendered by their format, and attempted, retried and
 * ended like any webhook delivery.
 */
const bed = webhookTestbed();
const { receiver, dispatcher } = bed;

/** A Kannel send whose dlr-url points at the receiver; the ids of its messages, brought to `sending`. */
async function kannelSend(api: TestApi, user: TestUser, target: Receiver, mask: number, count = 1): Promise<string[]> {
  const to = Array.from({ length: count }, () => phone());
  const query = new URLSearchParams({
    username: user.user.name,
    password: user.apiKey,
    to: to.join(' '),
    text: 'dlr test',
    'dlr-url': `${target.url}?type=%d&reply=%A&to=%p`,
    'dlr-mask': String(mask),
  });
  const res = await api.app.inject({ method: 'GET', url: `/cgi-bin/sendsms?${query}` });
  expect([res.statusCode, res.body]).toEqual([202, '0: Accepted for delivery']);
  const messages = await api.db.message.findMany({ where: { userId: user.userId }, orderBy: { createdAt: 'asc' }, select: { id: true, to: true } });
  const ids = to.map((number) => messages.find((m) => m.to === number)!.id);
  return toSending(api, user, ids);
}

const query = (r: { url: string }) => Object.fromEntries(new URL(r.url, 'http://x').searchParams);

describe('callbacks of a send', () => {
  it('reports a sent message that did not arrive as type 2 and one never sent as 16, and writes nothing the mask leaves out', async () => {
    const api = bed.api;
    const user = await createTestUser(api.db);
    const target = await receiver(() => 200);
    const [undelivered, neverSent] = await kannelSend(api, user, target, 2, 2);
    // Mask 16 alone: a message that was sent and then not delivered is not reported.
    const [notAsked] = await kannelSend(api, user, target, 16);
    await dispatcher();

    await report(api, user, 'sent', [undelivered!, notAsked!]);
    await report(api, user, 'failed', [undelivered!, neverSent!, notAsked!]);

    // The receiver has the requests before the engine records their answers: wait for both.
    await vi.waitFor(
      async () => {
        expect(target.received).toHaveLength(2);
        const rows = await api.db.webhookDelivery.findMany({ where: { userId: user.userId } });
        expect(rows.map((r) => [r.type, r.state, r.webhookId === null, r.callbackId !== null]).sort()).toEqual([
          ['message.failed', 'succeeded', true, true],
          ['message.failed', 'succeeded', true, true],
        ]);
      },
      { timeout: 15_000 },
    );
    expect(target.received.every((r) => r.method === 'GET')).toBe(true);
    const reports = target.received.map(query).sort((a, b) => a.type!.localeCompare(b.type!));
    expect(reports.map((q) => [q.type, q.reply])).toEqual([
      ['16', 'NACK/test failure'],
      ['2', 'UNDELIV/test failure'],
    ]);
  });

  it('retries a callback that answered 500, as any webhook, and ends one that answered 410 without touching anything else', async () => {
    const api = bed.api;
    const user = await createTestUser(api.db);
    const flaky = await receiver((n) => (n === 1 ? 500 : 200));
    const [retried] = await kannelSend(api, user, flaky, 8);
    const gone = await receiver(() => 410);
    const [ended] = await kannelSend(api, user, gone, 8);
    await dispatcher();

    await report(api, user, 'sent', [retried!, ended!]);

    await vi.waitFor(
      async () => {
        const [own] = await deliveries(api, { messageId: retried! });
        expect([own?.state, own?.attempts, own?.lastStatusCode]).toEqual(['succeeded', 2, 200]);
      },
      { timeout: 15_000 },
    );
    await vi.waitFor(
      async () => {
        const [own] = await deliveries(api, { messageId: ended! });
        expect([own?.state, own?.attempts, own?.lastStatusCode]).toEqual(['failed', 1, 410]);
      },
      { timeout: 15_000 },
    );
    expect(flaky.received.map((r) => query(r).type)).toEqual(['8', '8']);
    expect(gone.received).toHaveLength(1);
  });
});

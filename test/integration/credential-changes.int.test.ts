import { describe, expect, inject, it, vi } from 'vitest';
import pg from 'pg';
import { CREDENTIALS_CHANNEL, listenForCredentialChanges } from '@smsgw/db';
import { startRelay } from '../support/relay.ts';

/**
 * The listening connection behind every API process's credential cache (packages/db,
 * credential-changes.ts): a connection that goes silent without closing is found out by its
 * probe, so the cache is emptied rather than trusted while announcements cannot arrive.
 */
describe('credential-change announcements', () => {
  it('counts a listening connection that stops answering, without closing, as lost', async () => {
    const server = new URL(inject('databaseUrl'));
    const relay = await startRelay(server);
    const through = new URL(server);
    through.port = new URL(relay.url).port;
    const events: string[] = [];
    const changes = await listenForCredentialChanges({
      url: through.toString(),
      onChange: (userId) => events.push(`change ${userId}`),
      onLive: () => events.push('live'),
      onLost: () => events.push('lost'),
      retryMs: 60_000,
      probeMs: 100,
      probeTimeoutMs: 200,
    });
    try {
      expect(events).toEqual(['live']);
      // Announcements are heard while the connection answers, probes and all.
      const notifier = new pg.Client({ connectionString: server.toString() });
      await notifier.connect();
      await notifier.query(`SELECT pg_notify('${CREDENTIALS_CHANNEL}', 'user-1')`);
      await notifier.end();
      await vi.waitFor(() => expect(events).toEqual(['live', 'change user-1']));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(events).toEqual(['live', 'change user-1']);

      relay.stopForwarding();
      await vi.waitFor(() => expect(events).toEqual(['live', 'change user-1', 'lost']), { timeout: 2000, interval: 20 });
    } finally {
      await changes.close();
      await relay.close();
    }
  });
});

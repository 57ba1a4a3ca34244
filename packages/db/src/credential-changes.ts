import pg from 'pg';

/**
 * The channel on which Postgres announces, on commit, every change to what a credential stands for
 * (triggers of migration 20261127125000_credential_changes): a key revoked or deleted, a user
 * disabled, renamed, deleted or given another quota, a scoped token revoked. The payload is the
 * user's id, whoever made the change (the API, the CLI, an operator in psql).
 */
export const CREDENTIALS_CHANNEL = 'smsgw_credentials';

export interface CredentialChangesOptions {
  /** Postgres itself, never a transaction pooler: its LISTEN would land on a pooled server connection and hear nothing. */
  url: string;
  /** A user's credentials changed. */
  onChange: (userId: string) => void;
  /** LISTEN is confirmed: from now on no change is missed (again after a reconnect). */
  onLive: () => void;
  /** The connection failed: changes may be missed until `onLive` is called again. */
  onLost: (error: Error) => void;
  /** Milliseconds between attempts to listen again. */
  retryMs?: number;
  /** Milliseconds between probes of the listening connection (PROBE_MS). */
  probeMs?: number;
  /** How long a probe may go unanswered before the connection counts as lost (PROBE_TIMEOUT_MS). */
  probeTimeoutMs?: number;
}

/**
 * A listening connection that goes silent without closing (a half-open TCP connection, a stalled
 * server or proxy) would miss announcements unnoticed: it is probed with a statement every
 * PROBE_MS, and lost when one is not answered within PROBE_TIMEOUT_MS. So a change is heard,
 * or the cache is emptied, within PROBE_MS + PROBE_TIMEOUT_MS whatever happens to the connection.
 */
export const PROBE_MS = 5000;
/** The listening connection's `application_name`, unless the URL names one. */
export const LISTENER_NAME = 'smsgw-credential-changes';
export const PROBE_TIMEOUT_MS = 2000;

export interface CredentialChanges {
  close(): Promise<void>;
}

/**
 * Listens to CREDENTIALS_CHANNEL on a connection of its own (a listening connection cannot serve a
 * pool), probed every `probeMs`, reconnecting after `retryMs` whenever it fails or goes silent. Resolves after the first attempt, whether
 * it succeeded or not: a process starts even while Postgres is away.
 */
export async function listenForCredentialChanges(options: CredentialChangesOptions): Promise<CredentialChanges> {
  const { url, onChange, onLive, onLost, retryMs = 1000, probeMs = PROBE_MS, probeTimeoutMs = PROBE_TIMEOUT_MS } = options;
  let current: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  let probing: NodeJS.Timeout | undefined;
  let closed = false;
  const dead = new WeakSet<pg.Client>();

  const lost = (client: pg.Client, error: Error) => {
    if (dead.has(client)) return;
    dead.add(client);
    client.end().catch(() => undefined);
    if (current === client) {
      current = null;
      clearInterval(probing);
    }
    if (closed) return;
    onLost(error);
    retry = setTimeout(() => void connect(), retryMs);
  };

  async function connect(): Promise<void> {
    // Named, so that an operator (or a test) can tell it in pg_stat_activity; a name in the URL wins.
    const client = new pg.Client({ connectionString: url, application_name: LISTENER_NAME, keepAlive: true });
    client.on('notification', ({ channel, payload }) => {
      if (channel === CREDENTIALS_CHANNEL && payload) onChange(payload);
    });
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client, new Error('the credential-changes connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
    } catch (error) {
      return lost(client, error as Error);
    }
    if (closed || dead.has(client)) {
      dead.add(client);
      await client.end().catch(() => undefined);
      return;
    }
    current = client;
    probing = setInterval(() => probe(client), probeMs);
    probing.unref();
    onLive();
  }

  function probe(client: pg.Client): void {
    const silent = setTimeout(() => lost(client, new Error(`the credential-changes connection did not answer within ${probeTimeoutMs} ms`)), probeTimeoutMs);
    client.query('SELECT 1').then(
      () => clearTimeout(silent),
      (error: unknown) => {
        clearTimeout(silent);
        lost(client, error as Error);
      },
    );
  }

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(probing);
      const client = current;
      current = null;
      if (client) {
        dead.add(client);
        await client.end().catch(() => undefined);
      }
    },
  };
}

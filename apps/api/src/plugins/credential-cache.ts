import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { hashSecret, listenForCredentialChanges } from '@smsgw/db';

/**
 * How long an entry is trusted at most. A change is announced on commit, and a listening connection
 * that goes silent is found out within seconds by its probe (credential-changes.ts), which empties
 * the cache: this is only a last net, long enough that a phone pinging every minute is served from
 * the cache.
 */
export const CREDENTIAL_TTL_MS = 10 * 60_000;
/** Entries kept at most (5,000 phones are 10,000: a token and a webhook address each); past it the oldest go first. */
export const CREDENTIAL_CACHE_SIZE = 50_000;

/** A cache key for a secret of `kind` (`key`, `phone`, `webhook:<device>`): its hash, never the secret itself. */
export function credentialKey(kind: string, secret: string): string {
  return `${kind}:${Buffer.from(hashSecret(secret)).toString('base64')}`;
}

interface Entry<T> {
  value: T;
  userId: string;
  expiresAt: number;
}

/**
 * The credentials this API process authenticated, so that a known key or JWT costs no statement
 * (docs/decisions.md, "Credentials are cached in each API process"). Only accepted credentials are
 * kept, each at most CREDENTIAL_TTL_MS. Postgres announces every change to a credential on commit
 * (`listenForCredentialChanges`), and `forgetUser` drops that user's entries. While the announcements
 * cannot be heard (the listening connection is down or not yet confirmed) nothing is kept or served
 * from here: every request asks Postgres, as without a cache. A lookup that overlaps a change is not
 * kept either (the generation moved), so a row read before a revocation never outlives it.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private generation = 0;
  private isLive = false;

  constructor(private readonly options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {}

  /** The cached value of `key`, else `load`'s (kept when accepted and nothing changed meanwhile). */
  async get<T>(key: string, load: () => Promise<T | null>, userOf: (value: T) => string): Promise<T | null> {
    const now = this.now();
    if (this.isLive) {
      const hit = this.entries.get(key);
      if (hit && hit.expiresAt > now) return hit.value as T;
      if (hit) this.entries.delete(key);
    }
    const generation = this.generation;
    const value = await load();
    if (value !== null && this.isLive && generation === this.generation) this.keep(key, value, userOf(value), now);
    return value;
  }

  /** A user's credentials changed: their entries go, and lookups in flight are not kept. */
  forgetUser(userId: string): void {
    this.generation++;
    for (const [key, entry] of this.entries) if (entry.userId === userId) this.entries.delete(key);
  }

  /** Whether changes are heard; either way what was kept goes (changes may have been missed). */
  setLive(live: boolean): void {
    this.generation++;
    this.entries.clear();
    this.isLive = live;
  }

  get live(): boolean {
    return this.isLive;
  }

  get size(): number {
    return this.entries.size;
  }

  private keep(key: string, value: unknown, userId: string, now: number): void {
    this.entries.delete(key);
    if (this.entries.size >= (this.options.maxEntries ?? CREDENTIAL_CACHE_SIZE)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, userId, expiresAt: now + (this.options.ttlMs ?? CREDENTIAL_TTL_MS) });
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    credentialCache: CredentialCache;
  }
}

/** The process's credential cache, live while the announcements of Postgres are heard. */
export const credentialCache = fp(
  async (app: FastifyInstance) => {
    const cache = new CredentialCache();
    const changes = await listenForCredentialChanges({
      // A LISTEN needs a session: through a transaction pooler its announcements would go unheard.
      url: app.config.DATABASE_DIRECT_URL ?? app.config.DATABASE_URL,
      onChange: (userId) => cache.forgetUser(userId),
      onLive: () => cache.setLive(true),
      onLost: (error) => {
        cache.setLive(false);
        app.incidents.report('credential-change announcements unheard: credentials read from Postgres on every request', error);
      },
    });
    app.decorate('credentialCache', cache);
    app.addHook('onClose', () => changes.close());
  },
  { name: 'credential-cache', dependencies: ['resources'] },
);

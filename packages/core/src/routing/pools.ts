import type { RoutingMessage } from './snapshot.ts';

/**
 * The pool a message is routed in: its user's devices, or, for an encrypted message (SMS Gate's
 * end-to-end encryption), its user's SMS Gate phones: only they can decrypt it, so round-robin,
 * pacing, budgets and failover move it among them alone.
 */
export function poolOf(m: Pick<RoutingMessage, 'userId' | 'encrypted'>): string {
  return m.encrypted ? encryptedPool(m.userId) : m.userId;
}

export function encryptedPool(userId: string): string {
  return `${userId}:sms_gate`;
}

/**
 * The devices a round-robin message may go to now, in pool order: never one it was already
 * attempted on (a retryable failure), nor a paused one (quarantined, or at Android's limit).
 */
export function failoverPool(pool: readonly string[], options: { attempted: ReadonlySet<string>; paused: ReadonlySet<string> }): string[] {
  return pool.filter((device) => !options.attempted.has(device) && !options.paused.has(device));
}

/** Each pool without its paused devices: where sticky choices and spills may go. */
export function openPools(pools: Map<string, string[]>, paused: ReadonlySet<string>): Map<string, string[]> {
  return new Map([...pools].map(([key, pool]) => [key, failoverPool(pool, { attempted: new Set(), paused })]));
}

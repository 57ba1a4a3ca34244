/**
 * No stale sends (docs/decisions.md, "No stale sends"): a message must be handed to a device (its
 * first offer) by its own `valid_until` when it has one, else within MAX_QUEUE_SECONDS of when it
 * was due (its `send_at`, else its creation); past that it fails "expired before it could be sent".
 * packages/db has the same rule as SQL (`queueDeadlineSql`).
 */
export function queueDeadline(m: { validUntil: Date | null; sendAt: Date | null; createdAt: Date }, maxQueueSeconds: number): Date {
  if (m.validUntil !== null) return m.validUntil;
  return new Date((m.sendAt ?? m.createdAt).getTime() + maxQueueSeconds * 1000);
}

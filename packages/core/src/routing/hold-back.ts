import { queueDeadline } from '../queue-deadline.ts';
import type { Decision } from './decisions.ts';
import type { RoutingMessage } from './snapshot.ts';

/**
 * Hold-back (decisions.md, "Scheduled sends and validity"): a message past its queue deadline (its
 * valid_until, else MAX_QUEUE_SECONDS from when it was due) fails as expired; one not yet due (its
 * job ran early) waits until its send_at. The assignment statement checks both again, so a message
 * slipping past here is still never assigned.
 */
export function holdBack(
  messages: RoutingMessage[],
  options: { now: Date; maxQueueSeconds: number },
): { ready: RoutingMessage[]; held: Map<string, Decision> } {
  const held = new Map<string, Decision>();
  for (const m of messages) {
    if (queueDeadline(m, options.maxQueueSeconds) <= options.now) held.set(m.id, { action: 'fail', reason: 'expired' });
    else if (m.sendAt !== null && m.sendAt > options.now) held.set(m.id, { action: 'wait', reason: 'not_due', until: m.sendAt });
  }
  return { ready: messages.filter((m) => !held.has(m.id)), held };
}

import type { FastifyInstance } from 'fastify';
import { DEVICE_PROTOCOLS, cancelsHeldMessages, isFinal, isInHand, isNeverHanded, isUuid } from '@smsgw/core';
import { announceTransitions, cancelMessages, loadCancelTargets, requestPhoneCancel, type AuthenticatedDevice, type CancelTarget } from '@smsgw/db';
import { publishCancels } from '@smsgw/queue';
import { announceDeps } from './send-deps.ts';

/**
 * Cancelling messages (decisions.md, "Cancel"). A message in no device's hands is cancelled at
 * once; one a phone that can cancel (its protocol's `remoteCancel`: SMS Gate v1.67+) holds and has
 * not reported sent (offered, or acknowledged: the app acknowledges with `Pending` what it holds
 * back) is cancelled on the phone, which cancels it if it has not handed it to Android yet, and whose `Cancelled` snapshot
 * then cancels it here; any other is refused with the reason. A message cancelled before counts as cancelled (a repeated request gets the same answer).
 */
export interface CancelOutcome {
  cancelled: string[];
  cancelling: string[];
  refused: { id: string; reason: string }[];
}

export async function cancelTargets(app: FastifyInstance, userId: string, targets: CancelTarget[]): Promise<CancelOutcome> {
  const now = new Date();
  const unhanded = targets.filter(isNeverHanded).map((t) => t.id);
  const done = await cancelMessages(app.sql, { ids: unhanded, by: 'user', ownerId: userId, now, detail: 'Cancelled by the user.' });
  // A message that was assigned or offered meanwhile lost the race to its device: decided again as it is now.
  const moved = new Set(done.moved);
  const lost = unhanded.filter((id) => !moved.has(id));
  const current = [...targets.filter((t) => !isNeverHanded(t)), ...(lost.length > 0 ? await loadCancelTargets(app.sql, { userId, ids: lost }) : [])];
  // Cancelled before (a repeated request): counted as cancelled, so that a retry gets the same answer.
  const already = current.filter((t) => t.state === 'cancelled').map((t) => t.id);
  const rest = current.filter((t) => t.state !== 'cancelled');

  const asked = await requestPhoneCancel(app.sql, { userId, ids: rest.filter(phoneCanCancel).map((t) => t.id), now });
  await publishCancels(app.redis, app.config.QUEUE_PREFIX, asked);
  const askedIds = new Set(asked.map((a) => a.id));
  await announceTransitions(announceDeps(app), done);
  return {
    cancelled: [...done.moved, ...already],
    cancelling: [...askedIds],
    refused: rest.filter((t) => !askedIds.has(t.id)).map((t) => ({ id: t.id, reason: refusal(t) })),
  };
}

/**
 * The phone's `Cancelled` snapshots of messages it was asked to cancel: those messages are now
 * cancelled (their quota given back); returns their ids, the others' snapshots are reports as before.
 */
export async function confirmPhoneCancels(app: FastifyInstance, device: AuthenticatedDevice, ids: string[]): Promise<Set<string>> {
  const own = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
  const done = await cancelMessages(app.sql, { ids: own, by: 'phone', ownerId: device.id, now: new Date(), detail: 'Cancelled on the phone, as asked.' });
  await announceTransitions(announceDeps(app), done);
  return new Set(done.moved);
}

function phoneCanCancel(t: CancelTarget): boolean {
  return isInHand(t) && t.protocol !== null && cancelsHeldMessages({ protocol: t.protocol, appVersion: t.appVersion });
}

function refusal(t: CancelTarget): string {
  if (isFinal(t.state)) return `The message is already ${t.state}.`;
  if (t.state === 'sent') return 'Its device has sent the message already; it cannot be taken back.';
  // Its phone could cancel it, but reported it sent while the cancel was on its way.
  if (phoneCanCancel(t)) return 'Its phone has just sent the message; it cannot be taken back.';
  const remote = t.protocol && DEVICE_PROTOCOLS[t.protocol].remoteCancel;
  if (remote)
    return `The ${remote.app} of its phone (version ${t.appVersion ?? 'unknown'}) cannot cancel a message it holds; version ${remote.fromVersion} or later can.`;
  if (t.state === 'sending') return 'Its device is already sending the message; it cannot be taken back.';
  return 'Its device has taken the message already and cannot give it back.';
}

import { expect, it } from 'vitest';
import { MESSAGE_STATES, statesLeadingTo } from './status.ts';
import { isInHand, isNeverHanded, isUnacknowledged, isUnclaimed, type SubStateFields } from './sub-states.ts';

const ROWS: SubStateFields[] = MESSAGE_STATES.flatMap((state) => [null, new Date()].map((offeredAt) => ({ state, offeredAt })));
const statesOf = (predicate: (m: SubStateFields) => boolean) => [...new Set(ROWS.filter(predicate).map((m) => m.state))];

it('a message is never handed or in hand, not both, and the two split the assigned ones by their offer', () => {
  expect(ROWS.filter((m) => isNeverHanded(m) && isInHand(m))).toEqual([]);
  expect(ROWS.filter((m) => m.state === 'assigned').every((m) => isUnclaimed(m) !== isUnacknowledged(m))).toBe(true);
  expect(statesOf(isNeverHanded)).toEqual(['pending', 'assigned']);
});

it('the states in hand are those a retryable failure moves from: back to pending, or to failed', () => {
  expect(statesOf(isInHand)).toEqual(statesLeadingTo('pending').filter((s) => statesLeadingTo('failed').includes(s)));
});

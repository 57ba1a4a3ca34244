import { describe, expect, it } from 'vitest';
import {
  MESSAGE_STATES,
  MESSAGE_STATUSES,
  STATUS_FILTER_VALUES,
  canTransition,
  isFinal,
  statesLeadingTo,
  statesMatching,
  statusOf,
  type MessageState,
} from './status.ts';

const ALLOWED = new Set([
  'pending->assigned',
  'pending->failed',
  'assigned->sending',
  'assigned->sent',
  'assigned->delivered',
  'assigned->pending',
  'assigned->failed',
  'sending->sent',
  'sending->delivered',
  'sending->failed',
  'sending->pending',
  'sent->delivered',
  'sent->failed',
  'pending->cancelled',
  'assigned->cancelled',
  'sending->cancelled',
]);

const ALL_STATES: MessageState[] = ['pending', 'assigned', 'sending', 'sent', 'delivered', 'failed', 'cancelled'];
const PAIRS = ALL_STATES.flatMap((from) => ALL_STATES.map((to) => ({ from, to, allowed: ALLOWED.has(`${from}->${to}`) })));

describe('status machine', () => {
  it('has exactly the seven lifecycle states and the six public statuses', () => {
    expect([...MESSAGE_STATES]).toEqual(ALL_STATES);
    expect([...MESSAGE_STATUSES]).toEqual(['queued', 'sending', 'sent', 'delivered', 'failed', 'cancelled']);
    expect(PAIRS).toHaveLength(49);
  });

  it.each(PAIRS)('$from -> $to is allowed: $allowed', ({ from, to, allowed }) => {
    expect(canTransition(from, to)).toBe(allowed);
  });

  it('refuses every move out of a final state and every move to the same state', () => {
    for (const state of ALL_STATES) expect(canTransition(state, state)).toBe(false);
    for (const to of ALL_STATES) {
      expect(canTransition('delivered', to)).toBe(false);
      expect(canTransition('failed', to)).toBe(false);
      expect(canTransition('cancelled', to)).toBe(false);
    }
  });

  it('knows the final states', () => {
    expect(ALL_STATES.filter(isFinal)).toEqual(['delivered', 'failed', 'cancelled']);
  });

  it.each([
    ['pending', ['assigned', 'sending']],
    ['assigned', ['pending']],
    ['sending', ['assigned']],
    ['sent', ['assigned', 'sending']],
    ['delivered', ['assigned', 'sending', 'sent']],
    ['failed', ['pending', 'assigned', 'sending', 'sent']],
    ['cancelled', ['pending', 'assigned', 'sending']],
  ] as const)('gives the expected states of a compare-and-set to %s', (to, from) => {
    expect(statesLeadingTo(to)).toEqual(from);
  });
});

describe('statusOf', () => {
  it.each([
    ['pending', 'queued'],
    ['assigned', 'queued'],
    ['sending', 'sending'],
    ['sent', 'sent'],
    ['delivered', 'delivered'],
    ['failed', 'failed'],
    ['cancelled', 'cancelled'],
  ] as const)('shows state %s as status %s', (state, status) => {
    expect(statusOf(state)).toBe(status);
  });
});

describe('statesMatching', () => {
  it.each([
    ['queued', ['pending', 'assigned']],
    ['sending', ['sending']],
    ['sent', ['sent']],
    ['delivered', ['delivered']],
    ['failed', ['failed']],
    ['pending', ['pending']],
    ['assigned', ['assigned']],
    ['cancelled', ['cancelled']],
  ] as const)('filter %s matches exactly the states %j', (filter, states) => {
    expect(statesMatching(filter)?.slice().sort()).toEqual([...states].sort());
  });

  it.each(['bogus', '', 'QUEUED', 'Pending', ' sent', 'sent ', 'accepted', 'toString', '__proto__', 'constructor'])(
    'matches nothing for %j, which is in neither vocabulary',
    (filter) => {
      expect(statesMatching(filter)).toBeUndefined();
    },
  );

  it('accepts as filter values exactly the union of both vocabularies', () => {
    expect([...STATUS_FILTER_VALUES].sort()).toEqual(['assigned', 'cancelled', 'delivered', 'failed', 'pending', 'queued', 'sending', 'sent']);
  });
});

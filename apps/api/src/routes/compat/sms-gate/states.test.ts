import { describe, expect, it } from 'vitest';
import { messageState, recipientState, stateTimes, type RecipientRow } from './states.ts';

const t = (s: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, s));
const row = (over: Partial<RecipientRow>): RecipientRow => ({
  state: 'pending',
  createdAt: t(0),
  sendingAt: null,
  sentAt: null,
  deliveredAt: null,
  failedAt: null,
  cancelledAt: null,
  cancelRequestedAt: null,
  ...over,
});

describe('SMS Gate states', () => {
  it('maps each smsgw state of a recipient as the issue says, a cancel asked of the phone being Cancelling', () => {
    expect(
      (['pending', 'assigned', 'sending', 'sent', 'delivered', 'failed', 'cancelled'] as const).map((state) =>
        recipientState({ state, cancelRequestedAt: null }),
      ),
    ).toEqual(['Pending', 'Pending', 'Processed', 'Sent', 'Delivered', 'Failed', 'Cancelled']);
    expect(recipientState({ state: 'assigned', cancelRequestedAt: t(1) })).toBe('Cancelling');
    expect(recipientState({ state: 'sending', cancelRequestedAt: t(1) })).toBe('Cancelling');
    expect(recipientState({ state: 'sent', cancelRequestedAt: t(1) })).toBe('Sent');
  });

  it("aggregates in the app's order: Pending, Cancelling, Cancelled, Processed, all Failed, all Delivered, else Sent", () => {
    expect(messageState(['Delivered', 'Pending', 'Cancelling'])).toBe('Pending');
    expect(messageState(['Cancelled', 'Cancelling'])).toBe('Cancelling');
    expect(messageState(['Processed', 'Cancelled'])).toBe('Cancelled');
    expect(messageState(['Sent', 'Processed'])).toBe('Processed');
    expect(messageState(['Failed', 'Failed'])).toBe('Failed');
    expect(messageState(['Delivered', 'Delivered'])).toBe('Delivered');
    expect(messageState(['Delivered', 'Failed'])).toBe('Sent');
    expect(messageState(['Delivered', 'Sent'])).toBe('Sent');
  });

  it('times each state the message as a whole reached, never a state client-go refuses', () => {
    const rows = [
      row({ state: 'delivered', sendingAt: t(1), sentAt: t(2), deliveredAt: t(5) }),
      row({ state: 'delivered', sendingAt: t(1), sentAt: t(3), deliveredAt: t(4) }),
    ];
    expect(stateTimes(rows)).toEqual({ Pending: t(0).toISOString(), Processed: t(1).toISOString(), Sent: t(3).toISOString(), Delivered: t(5).toISOString() });
    expect(stateTimes([row({ state: 'cancelled', cancelledAt: t(2) })])).toEqual({ Pending: t(0).toISOString() });
    expect(stateTimes([row({ state: 'failed', failedAt: t(2) })])).toEqual({ Pending: t(0).toISOString(), Failed: t(2).toISOString() });
  });
});

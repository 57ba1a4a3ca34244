import { describe, expect, it } from 'vitest';
import { queueDeadline } from './queue-deadline.ts';

const createdAt = new Date('2026-11-26T10:00:00.000Z');

describe('queue deadline', () => {
  it('is MAX_QUEUE_SECONDS after creation, or after send_at for a scheduled message', () => {
    expect(queueDeadline({ validUntil: null, sendAt: null, createdAt }, 36000)).toEqual(new Date('2026-11-26T20:00:00.000Z'));
    expect(queueDeadline({ validUntil: null, sendAt: new Date('2026-11-27T08:00:00.000Z'), createdAt }, 60)).toEqual(new Date('2026-11-27T08:01:00.000Z'));
  });

  it("is the message's own valid_until when it has one, earlier or later", () => {
    const validUntil = new Date('2026-11-27T09:00:00.000Z');
    expect(queueDeadline({ validUntil, sendAt: null, createdAt }, 60)).toBe(validUntil);
  });
});

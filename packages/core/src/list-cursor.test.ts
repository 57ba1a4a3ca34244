import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './list-cursor.ts';

describe('list cursors', () => {
  it('round-trips a position to the millisecond', () => {
    const position = { createdAt: new Date('2026-11-24T07:05:09.123Z'), id: '0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b' };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
  });

  it('refuses what it did not make', () => {
    const valid = encodeCursor({ createdAt: new Date(0), id: '0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b' });
    for (const cursor of [
      '',
      'not a cursor',
      `${valid}=`,
      Buffer.from('12.nope').toString('base64url'),
      Buffer.from('x.0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b').toString('base64url'),
      Buffer.from(`1.0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b.1`).toString('base64url'),
      'A'.repeat(201),
    ]) {
      expect(decodeCursor(cursor), cursor).toBeNull();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { CredentialCache } from './credential-cache.ts';

const user = (id: string) => ({ id });
const loader = (value: { id: string } | null) => {
  const calls = { count: 0 };
  return {
    calls,
    load: async () => {
      calls.count++;
      return value;
    },
  };
};

describe('CredentialCache', () => {
  it('serves an accepted credential from memory until its TTL, then asks again', async () => {
    let now = 0;
    const cache = new CredentialCache({ ttlMs: 100, now: () => now });
    cache.setLive(true);
    const { calls, load } = loader(user('u1'));
    await cache.get('k', load, (u) => u.id);
    now = 99;
    await cache.get('k', load, (u) => u.id);
    now = 100;
    await cache.get('k', load, (u) => u.id);
    expect(calls.count).toBe(2);
  });

  it('keeps no refusal, and nothing while not live', async () => {
    const cache = new CredentialCache();
    const refused = loader(null);
    cache.setLive(true);
    await cache.get('k', refused.load, (u) => u.id);
    await cache.get('k', refused.load, (u) => u.id);
    cache.setLive(false);
    const accepted = loader(user('u1'));
    await cache.get('a', accepted.load, (u) => u.id);
    await cache.get('a', accepted.load, (u) => u.id);
    expect([refused.calls.count, accepted.calls.count, cache.size]).toEqual([2, 2, 0]);
  });

  it("drops a user's entries on a change, and never keeps a lookup that overlapped one", async () => {
    const cache = new CredentialCache();
    cache.setLive(true);
    await cache.get('a', loader(user('u1')).load, (u) => u.id);
    await cache.get('b', loader(user('u2')).load, (u) => u.id);
    cache.forgetUser('u1');
    expect(cache.size).toBe(1);
    const overlapping = cache.get(
      'c',
      async () => {
        cache.forgetUser('u3');
        return user('u3');
      },
      (u) => u.id,
    );
    expect(await overlapping).toEqual(user('u3'));
    expect(cache.size).toBe(1);
  });

  it('holds at most maxEntries, the oldest going first', async () => {
    const cache = new CredentialCache({ maxEntries: 2 });
    cache.setLive(true);
    for (const key of ['a', 'b', 'c']) await cache.get(key, loader(user(key)).load, (u) => u.id);
    const again = loader(user('a'));
    await cache.get('a', again.load, (u) => u.id);
    await cache.get('c', loader(user('c')).load, (u) => u.id);
    expect([cache.size, again.calls.count]).toEqual([2, 1]);
  });
});

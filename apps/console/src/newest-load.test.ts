import { describe, expect, it } from 'vitest';
import { newestLoad } from './newest-load.ts';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('newestLoad', () => {
  it('applies the newest load and drops an older one that settles after it', async () => {
    const shown: string[] = [];
    const errors: unknown[] = [];
    const start = newestLoad<string>({ data: (d) => shown.push(d), error: (e) => errors.push(e) });
    const first = deferred<string>();
    const second = deferred<string>();
    start(first.promise);
    start(second.promise);
    second.resolve('second filter');
    await second.promise;
    first.resolve('first filter');
    await first.promise;
    await Promise.resolve();
    expect(shown).toEqual(['second filter']);
    expect(errors).toEqual([]);
  });

  it('drops an older load’s failure too, and applies the newest one’s', async () => {
    const shown: string[] = [];
    const errors: unknown[] = [];
    const start = newestLoad<string>({ data: (d) => shown.push(d), error: (e) => errors.push(e) });
    const first = deferred<string>();
    const second = deferred<string>();
    start(first.promise);
    start(second.promise);
    second.reject(new Error('second failed'));
    first.reject(new Error('first failed'));
    await Promise.allSettled([first.promise, second.promise]);
    await Promise.resolve();
    expect(errors.map((e) => (e as Error).message)).toEqual(['second failed']);
    expect(shown).toEqual([]);
  });

  it('applies each load of a series that settle in order', async () => {
    const shown: number[] = [];
    const start = newestLoad<number>({ data: (d) => shown.push(d), error: () => {} });
    for (const n of [1, 2, 3]) {
      const load = Promise.resolve(n);
      start(load);
      await load;
      await Promise.resolve();
    }
    expect(shown).toEqual([1, 2, 3]);
  });
});

import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.ts';

/** A promise with its resolve function, to hold a batch open until the test lets it finish. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A batcher whose handler records every batch it is given and answers `item * 10`. */
function recordingBatcher(maxSize: number, hold?: Promise<void>) {
  const batches: number[][] = [];
  const batcher = new Batcher<number, number>(async (items) => {
    batches.push([...items]);
    if (hold && batches.length === 1) await hold;
    return items.map((item) => item * 10);
  }, maxSize);
  return { batcher, batches };
}

describe('Batcher', () => {
  it('handles items added in the same tick as one batch', async () => {
    const { batcher, batches } = recordingBatcher(10);
    await Promise.all([batcher.add(1), batcher.add(2), batcher.add(3)]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('with a linger, lets the items of the next milliseconds join the first one’s batch', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push([...items]);
        return items;
      },
      10,
      30,
    );
    const first = batcher.add(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(batches).toEqual([]);
    const second = batcher.add(2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('splits the waiting items into batches of at most maxSize, in order', async () => {
    const { batcher, batches } = recordingBatcher(3);
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => batcher.add(n)));
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it("resolves each caller with its own item's result, whatever batch it was in", async () => {
    const { batcher } = recordingBatcher(2);
    const results = await Promise.all([5, 1, 4, 2, 3].map((n) => batcher.add(n)));
    expect(results).toEqual([50, 10, 40, 20, 30]);
  });

  it('handles a lone item at once, without waiting for the batch to fill', async () => {
    const { batcher, batches } = recordingBatcher(500);
    await expect(batcher.add(7)).resolves.toBe(70);
    expect(batches).toEqual([[7]]);
  });

  it('rejects every item of a batch whose handler fails, and still handles the next batch', async () => {
    const failure = new Error('database unavailable');
    const batches: string[][] = [];
    const batcher = new Batcher<string, string>(async (items) => {
      batches.push([...items]);
      if (items.includes('bad')) throw failure;
      return items.map((item) => item.toUpperCase());
    }, 2);

    const outcomes = await Promise.allSettled(['a', 'bad', 'c'].map((item) => batcher.add(item)));

    expect(batches).toEqual([['a', 'bad'], ['c']]);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
      { status: 'fulfilled', value: 'C' },
    ]);
  });

  it('rejects the batch when the handler throws synchronously', async () => {
    const failure = new Error('boom');
    const batcher = new Batcher<number, number>(() => {
      throw failure;
    }, 5);
    const outcomes = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });

  it('puts items added while a batch is running into the next batch', async () => {
    const hold = deferred();
    const { batcher, batches } = recordingBatcher(10, hold.promise);

    const first = batcher.add(1);
    await expect.poll(() => batches.length).toBe(1);
    const later = [batcher.add(2), batcher.add(3)];
    // The first batch is still running: nothing else may have started.
    expect(batches).toEqual([[1]]);

    hold.resolve();
    expect(await Promise.all([first, ...later])).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1], [2, 3]]);
  });

  it('starts again after it went idle', async () => {
    const { batcher, batches } = recordingBatcher(10);
    expect(await batcher.add(1)).toBe(10);
    expect(await batcher.add(2)).toBe(20);
    expect(batches).toEqual([[1], [2]]);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Retries after the first attempt (Infinity: until it succeeds or `signal` aborts). */
  retries: number;
  /** Delay before the first retry; each later one doubles, up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs?: number;
  signal: AbortSignal;
  /** Whether an error is worth another attempt; others are thrown at once. */
  retryIf?: (error: unknown) => boolean;
  onError?: (error: unknown, attempt: number) => void;
}

/** Runs `attempt` until it succeeds, backing off exponentially as the app's background workers do. */
export async function retry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let n = 0; ; n++) {
    options.signal.throwIfAborted();
    try {
      return await attempt(n);
    } catch (error) {
      if (options.signal.aborted || n >= options.retries || (options.retryIf && !options.retryIf(error))) throw error;
      options.onError?.(error, n);
      await sleep(backoff(n, options), undefined, { signal: options.signal });
    }
  }
}

export function backoff(retryIndex: number, options: { firstDelayMs: number; maxDelayMs?: number }): number {
  return Math.min(options.firstDelayMs * 2 ** Math.min(retryIndex, 30), options.maxDelayMs ?? Infinity);
}

import { setFlagsFromString } from 'node:v8';

/**
 * Sets how far V8 lets the heap grow past what a full collection left before it collects again
 * (HEAP_GROWTH_PERCENT; 0 keeps V8's own factor, up to 4). V8 reads the flag at every collection,
 * so setting it when the process starts is enough; the API and the dispatcher call it first thing.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

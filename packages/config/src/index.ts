export * from './convert.ts';
export * from './env.ts';
export * from './log-output.ts';
export * from './heap.ts';
export * from './startup.ts';

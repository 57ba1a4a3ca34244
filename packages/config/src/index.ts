export * from './convert.ts';
export * from './env.ts';

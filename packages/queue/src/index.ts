export * from './catalog.ts';
export * from './connection.ts';
export * from './producers.ts';
export * from './wakeups.ts';

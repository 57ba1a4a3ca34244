export * from './catalog.ts';
export * from './connection.ts';
export * from './producers.ts';

export * from './catalog.ts';
export * from './connection.ts';
export * from './producers.ts';
export * from './wakeups.ts';
export * from './user-events.ts';
export * from './process-settings.ts';
export * from './device-pacing.ts';
export * from './device-budgets.ts';

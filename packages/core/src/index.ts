export * from './errors.ts';
export * from './ids.ts';
export * from './phone.ts';
export * from './quota-period.ts';
export * from './segments.ts';
export * from './status.ts';
export * from './text.ts';
export * from './message-record.ts';

export * from './device-client.ts';
export * from './http.ts';
export * from './sms-gate-client.ts';
export * from './smsgw-client.ts';
export * from './openapi/client.ts';

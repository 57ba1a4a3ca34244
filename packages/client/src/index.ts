export * from './device-client.ts';
export * from './http.ts';
export * from './smsgw-client.ts';

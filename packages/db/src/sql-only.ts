// The statements that run on a plain node-postgres pool, without loading Prisma (the dispatcher).
export * from './device-protocol.ts';
export * from './dispatch.ts';
export * from './leases.ts';
export * from './secrets.ts';
export * from './sql.ts';
export * from './webhook-deliveries.ts';
export * from './retention.ts';
export * from './availability.ts';
export * from './offers.ts';
export * from './inbound.ts';
export { databaseProblem } from './migrator.ts';
export * from './status-events.ts';
export * from './cancel.ts';
export * from './pacing.ts';
export * from './device-health.ts';
export * from './store-send.ts';
export * from './device-budgets.ts';

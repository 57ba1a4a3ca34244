export * from './snapshot.ts';
export * from './decisions.ts';
export * from './plan.ts';
export * from './pools.ts';
export * from './round-robin.ts';
export * from './sticky.ts';
export * from './budgets.ts';
export { MIN_WAIT_MS } from './fit-and-spill.ts';
export { BudgetLedger } from './budget-ledger.ts';

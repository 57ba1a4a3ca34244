export { assignDevices, type AssignDeps, type AssignOutcome } from './assign-devices.ts';
export { planAndReserve, release, type Held } from './reserve-routing.ts';
export { readRoutingCounters, type CounterDeps } from './routing-counters.ts';

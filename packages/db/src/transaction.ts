import type { Db } from './client.ts';

/** The client handed to an interactive transaction's callback. */
export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

import { DelayedError, type Job } from 'bullmq';
import type { JobName, JobPayload } from '@smsgw/queue';

/** Handles one job of the catalog: its result is recorded as the job's outcome (a string names it). */
export type Handler<N extends JobName> = (payload: JobPayload<N>, job: Job, token: string | undefined) => Promise<unknown>;

// One handler per job of the catalog: a job name without a handler does not compile.
export type Handlers = { [N in JobName]: Handler<N> };

/** Runs a job again at `at` without counting a BullMQ attempt. */
export async function runAgainAt(job: Job, token: string | undefined, at: number): Promise<never> {
  await job.moveToDelayed(at, token);
  throw new DelayedError();
}

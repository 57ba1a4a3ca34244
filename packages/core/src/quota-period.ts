/** Quotas count messages per calendar month in UTC. */
export interface QuotaPeriod {
  /** `YYYY-MM` */
  label: string;
  start: Date;
  /** The first instant of the next month. */
  resetsAt: Date;
}

export function quotaPeriod(now: Date): QuotaPeriod {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { label: start.toISOString().slice(0, 7), start, resetsAt };
}

import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Batcher, pingIntervalSeconds, type HealthReport } from '@smsgw/core';
import { announceTransitions, recordHealthReports, type DeviceHealthReport } from '@smsgw/db';
import { announceDeps } from '../services/send-deps.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Records a device's report of itself (native heartbeat, SMS Gate `system:ping`); resolves once stored, with other devices' in one statement. */
    recordHealth: (deviceId: string, report: Partial<HealthReport>) => Promise<void>;
  }
}

// The most devices' reports written by one statement.
const REPORTS_PER_STATEMENT = 500;
// How long the first report waits for others: 5,000 phones pinging every minute are 83 a second,
// each its own statement and commit without it. A ping's answer may well wait this long.
const HEALTH_LINGER_MS = 100;

/**
 * The devices' reports of themselves on this API process, written together: one statement (and
 * one commit) for the reports that arrive within HEALTH_LINGER_MS, and for those that arrive while
 * it runs. Each request is answered once its report is stored, and fails (503) with the statement
 * (docs/decisions.md, "Device health reports are written together").
 */
export const healthIntake = fp(
  async (app: FastifyInstance) => {
    const batcher = new Batcher<DeviceHealthReport, void>(
      async (reports) => {
        const deliveries = await recordHealthReports(app.sql, reports, new Date(), pingIntervalSeconds(app.config.DEVICE_OFFLINE_AFTER_SECONDS));
        await announceTransitions(announceDeps(app), { deliveries });
        return reports.map(() => undefined);
      },
      REPORTS_PER_STATEMENT,
      HEALTH_LINGER_MS,
    );
    app.decorate('recordHealth', (deviceId: string, report: Partial<HealthReport>) => batcher.add({ deviceId, report }));
  },
  { name: 'health-intake', dependencies: ['resources'] },
);

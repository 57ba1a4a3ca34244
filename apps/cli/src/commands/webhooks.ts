import { AppError, isUuid } from '@smsgw/core';
import { createTestDelivery, findWebhook, listWebhooks } from '@smsgw/db';
import { enqueueWebhookDeliveries } from '@smsgw/queue';
import type { Command } from '../command.ts';
import { notFound } from '../errors.ts';
import { enabledUser, existingUser, paging, required } from '../flags.ts';
import { deliveryRecord, webhookRecord } from '../records.ts';

export const webhookCommands: Record<string, Command> = {
  'webhook list': {
    usage: 'webhook list --user USER [--limit N] [--offset N]',
    run: async ({ db }, flags) => {
      const user = await existingUser(db, flags);
      const page = paging(flags);
      const { rows, total } = await listWebhooks(db, { userId: user.id, ...page });
      return { data: rows.map(webhookRecord), total, ...page };
    },
  },
  'webhook test': {
    usage: 'webhook test --user USER --webhook WEBHOOK_ID',
    // POST /api/v1/webhooks/:id/test: a webhook.test delivery, stored (the outbox) and enqueued.
    run: async (context, flags) => {
      const { db } = context;
      const user = await enabledUser(db, flags);
      const id = required(flags, 'webhook');
      const webhook = isUuid(id) ? await findWebhook(db, { userId: user.id, id }) : null;
      if (!webhook) throw notFound(`no webhook with id ${id} for user ${flags.user}`);
      if (!webhook.enabled) throw new AppError('webhook_disabled');
      const queues = await context.queues();
      const delivery = await createTestDelivery(db, { userId: user.id, webhookId: webhook.id });
      try {
        await enqueueWebhookDeliveries(queues.webhooks, [{ id: delivery.id, webhookId: webhook.id }]);
      } catch (error) {
        context.warn('webhook enqueue failed: left to the outbox sweep', error, { deliveryId: delivery.id });
      }
      return deliveryRecord(delivery);
    },
  },
};

import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

// How often idle keep-alive connections are closed while the API shuts down.
const IDLE_SWEEP_MS = 100;

/**
 * A prompt shutdown. Once `close()` begins, every response says `Connection: close` and idle
 * keep-alive connections are closed as they become idle, so that a device or client that keeps
 * its connection open does not hold the server for its keep-alive time. Long polls and event
 * streams are ended by their own preClose hooks (wakeups, device routes).
 */
export const shutdown = fp(
  async (app: FastifyInstance) => {
    let closing = false;
    let sweeper: NodeJS.Timeout | undefined;
    app.addHook('preClose', async () => {
      closing = true;
      sweeper = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
      sweeper.unref();
    });
    app.addHook('onSend', async (_request, reply) => {
      if (closing) reply.header('connection', 'close');
    });
    app.addHook('onClose', async () => clearInterval(sweeper));
  },
  { name: 'shutdown' },
);

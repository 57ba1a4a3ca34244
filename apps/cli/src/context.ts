import type { CliConfig } from '@smsgw/config';
import { createSql, listingsInTransactions, type Db, type ListingSql, type Sql } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import {
  createDispatchQueue,
  createProducerConnection,
  createWebhooksQueue,
  redisTopology,
  withKeyPrefix,
  type DispatchQueue,
  type RedisClient,
  type WebhooksQueue,
} from '@smsgw/queue';
import { CliError } from './errors.ts';

export interface Queues {
  redis: RedisClient;
  dispatch: DispatchQueue;
  webhooks: WebhooksQueue;
}

/** Where a run writes: the process's streams, or a test's buffers. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * What a command works with: the configuration, and connections opened when first used (most
 * commands need only Postgres; the ones that enqueue also Redis). `close` ends every one of them,
 * so that the process exits as soon as the command is done.
 */
export class CliContext {
  private openDb: Db | undefined;
  private openSql: Sql | undefined;
  private openQueues: Queues | undefined;

  /** The environment's configuration; on a Redis Cluster QUEUE_PREFIX is a hash tag (`withKeyPrefix` of @smsgw/queue). */
  readonly config: CliConfig;

  constructor(
    config: CliConfig,
    private readonly output: CliOutput,
  ) {
    this.config = withKeyPrefix(config);
  }

  /** A warning on stderr, one JSON line (stdout carries only the command's result). */
  warn(warning: string, error: unknown, context: object = {}): void {
    this.output.stderr(`${JSON.stringify({ warning, ...context, error: error instanceof Error ? error.message : String(error) })}\n`);
  }

  get db(): Db {
    this.openDb ??= createDb({ url: this.config.DATABASE_URL, poolSize: 2 });
    return this.openDb;
  }

  /**
   * The listings (paging.ts in @smsgw/db), on `sql`, each in a transaction that sets the listings'
   * settings: the CLI needs DATABASE_URL alone, a transaction pooler's too.
   */
  get listingSql(): ListingSql {
    return listingsInTransactions(this.sql);
  }

  /** The node-postgres pool of the raw statements (a send's device check). */
  get sql(): Sql {
    this.openSql ??= createSql({ url: this.config.DATABASE_URL, poolSize: 1, onIdleError: (error) => this.warn('idle Postgres connection failed', error) });
    return this.openSql;
  }

  /** The queues, once Redis answers: a command that enqueues fails before it stores anything when Redis is away. */
  async queues(): Promise<Queues> {
    if (this.openQueues) return this.openQueues;
    const { REDIS_COMMAND_TIMEOUT_MS, QUEUE_PREFIX } = this.config;
    let variable: string;
    try {
      variable = redisTopology(this.config).variable;
    } catch (error) {
      throw new CliError('unavailable', 'redis_unavailable', (error as Error).message);
    }
    // One attempt, bounded: an operator waits for an answer, not for a reconnect loop.
    const redis = createProducerConnection(this.config, {
      lazyConnect: true,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: REDIS_COMMAND_TIMEOUT_MS,
      reconnect: false,
    });
    let failure: Error | undefined;
    redis.on('error', (error: Error) => (failure ??= error));
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      const reason = (failure ?? (error as Error)).message;
      throw new CliError('unavailable', 'redis_unavailable', `Cannot reach Redis (${variable}): ${reason}. Is it running?`);
    }
    const dispatch = createDispatchQueue(redis, QUEUE_PREFIX);
    const webhooks = createWebhooksQueue(redis, QUEUE_PREFIX);
    for (const queue of [dispatch, webhooks]) queue.on('error', (error) => (failure ??= error));
    this.openQueues = { redis, dispatch, webhooks };
    return this.openQueues;
  }

  /** Closes what was opened, in reverse order: queues and Redis, then Postgres. */
  async close(): Promise<void> {
    const queues = this.openQueues;
    if (queues) {
      await Promise.all([queues.dispatch.close(), queues.webhooks.close()]).catch(() => undefined);
      queues.redis.disconnect();
    }
    await Promise.all([this.openDb?.$disconnect(), this.openSql?.end()]);
  }
}

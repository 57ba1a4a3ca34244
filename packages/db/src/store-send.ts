import type pg from 'pg';
import type { NewMessages } from './messages.ts';

/** A pool or a client of one (inside a transaction): what a statement is run on. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

export interface QuotaCharge {
  period: Date;
  limit: number;
}

/**
 * Stores a send in one statement, so that it is atomic without a transaction and costs one round
 * trip whatever the number of recipients: the quota charge (a conditional upsert of the month's
 * row), the batch and every message (one `unnest` insert). Nothing is stored when the charge would
 * pass `limit`: returns false. Without `charge`, the rows are stored uncharged (the benchmark's floor).
 */
export async function storeSend(q: Queryable, m: NewMessages, charge: QuotaCharge | null): Promise<boolean> {
  const params: unknown[] = [
    m.userId, m.batch?.id ?? null, m.batch?.recipientsCount ?? null, m.requestedDeviceId, m.createdAt, m.sendAt ?? null, m.validUntil ?? null,
    m.simNumber ?? null, m.ids, m.recipients,
  ];
  const rows =
    m.texts.kind === 'same'
      ? (params.push(m.texts.body, m.texts.segments, m.texts.encoding),
        `SELECT t.id, t.to_number, $11::text, $12::int, $13::message_encoding FROM unnest($9::uuid[], $10::text[]) AS t(id, to_number)`)
      : (params.push(m.texts.bodies, m.texts.segments, m.texts.encodings),
        `SELECT t.id, t.to_number, t.body, t.segments, t.encoding::message_encoding
           FROM unnest($9::uuid[], $10::text[], $11::text[], $12::int[], $13::text[]) AS t(id, to_number, body, segments, encoding)`);
  let charged = 'SELECT 1';
  if (charge) {
    params.push(charge.period, m.ids.length, charge.limit);
    charged = `INSERT INTO quota_usage (user_id, period, used)
      SELECT $1::uuid, $14::date, $15::int WHERE $15::int <= $16::int
      ON CONFLICT (user_id, period) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
        WHERE quota_usage.used + EXCLUDED.used <= $16::int
      RETURNING 1`;
  }
  const { rows: result } = await q.query<{ charged: boolean }>(
    `WITH charged AS (${charged}),
     batch AS (
       INSERT INTO batches (id, user_id, recipients_count, created_at)
       SELECT $2::uuid, $1::uuid, $3::int, $5::timestamptz WHERE $2::uuid IS NOT NULL AND EXISTS (SELECT 1 FROM charged)
     ),
     stored AS (
       INSERT INTO messages (id, to_number, body, segments, encoding, user_id, batch_id, requested_device_id, created_at, updated_at,
                             send_at, valid_until, sim_number)
       SELECT m.*, $1::uuid, $2::uuid, $4::uuid, $5::timestamptz, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::smallint
         FROM (${rows}) AS m WHERE EXISTS (SELECT 1 FROM charged)
     )
     SELECT EXISTS (SELECT 1 FROM charged) AS charged`,
    params,
  );
  return result[0]!.charged;
}

/**
 * Runs `work` in a transaction on one connection of `sql`: committed when it returns, rolled back
 * when it throws (and the error passed on).
 */
export async function inTransaction<T>(sql: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await sql.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is discarded rather than returned to the pool.
    await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    throw error;
  } finally {
    client.release(broken);
  }
}

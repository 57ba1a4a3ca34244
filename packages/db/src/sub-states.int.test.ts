import {
  MESSAGE_STATES,
  cancellingSql,
  clampReportedAt,
  clampReportedAtSql,
  inHandSql,
  isCancelling,
  isInHand,
  isNeverHanded,
  isUnacknowledged,
  isUnclaimed,
  neverHandedSql,
  unacknowledgedSql,
  unclaimedSql,
  type SubStateFields,
} from '@smsgw/core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createSql, type Sql } from './sql.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

// Each named sub-state of @smsgw/core, held together with its SQL twin: the SQL is evaluated by
// Postgres over rows of the messages table's own type, for every combination of the columns it
// reads, and must agree with the TypeScript predicate on every row.
let database: TestDatabase;
let sql: Sql;
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  sql = createSql({ url: database.url, poolSize: 2 });
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

const T0 = new Date('2026-11-27T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const maybe = [null, at(0)];

interface Row extends SubStateFields {
  sendingAt: Date | null;
  /** A report's time, for the clamp. */
  at: Date | null;
}

/** Evaluates `expression` (SQL over the messages row `m` and the report time `r_at`) on each row. */
async function evaluate<T>(rows: Row[], expression: string, params: unknown[] = []): Promise<T[]> {
  const json = rows.map((r) => ({
    state: r.state,
    offered_at: r.offeredAt,
    cancel_requested_at: r.cancelRequestedAt,
    sending_at: r.sendingAt,
    r_at: r.at,
  }));
  const { rows: out } = await sql.query<{ v: T }>(
    `SELECT ${expression} AS v
     FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(row, i)
     CROSS JOIN LATERAL jsonb_populate_record(NULL::messages, e.row) AS m
     CROSS JOIN LATERAL (SELECT (e.row->>'r_at')::timestamptz AS r_at) AS r
     ORDER BY e.i`,
    [JSON.stringify(json), ...params],
  );
  return out.map((o) => o.v);
}

// Every state, offered or not, asked to cancel or not.
const STATE_ROWS: Row[] = MESSAGE_STATES.flatMap((state) =>
  maybe.flatMap((offeredAt) => maybe.map((cancelRequestedAt) => ({ state, offeredAt, cancelRequestedAt, sendingAt: null, at: null }))),
);

const PREDICATES: [string, (m: SubStateFields) => boolean, (m: string) => string][] = [
  ['unclaimed', isUnclaimed, unclaimedSql],
  ['never handed', isNeverHanded, neverHandedSql],
  ['unacknowledged', isUnacknowledged, unacknowledgedSql],
  ['in hand', isInHand, inHandSql],
  ['cancelling', isCancelling, cancellingSql],
];

it.each(PREDICATES)('"%s": its SQL agrees with its predicate on every state, offer and cancel request', async (_, predicate, twin) => {
  const fromSql = await evaluate<boolean>(STATE_ROWS, twin('m'));
  const label = (r: Row) => `${r.state} offered=${r.offeredAt !== null} cancel=${r.cancelRequestedAt !== null}`;
  expect(STATE_ROWS.map((r, i) => `${label(r)}: ${fromSql[i]}`)).toEqual(STATE_ROWS.map((r) => `${label(r)}: ${predicate(r)}`));
  // The rows cover both answers: a twin that is always true or always false fails.
  expect(new Set(fromSql)).toEqual(new Set([true, false]));
});

it('the report time clamp agrees with its SQL for every order of the report, the offer, the acknowledgement and now', async () => {
  const now = at(100);
  const times = [null, at(-10), at(5), at(20), at(150)];
  const rows: Row[] = times.flatMap((reported) =>
    times.flatMap((offeredAt) => times.map((sendingAt) => ({ state: 'sending' as const, offeredAt, cancelRequestedAt: null, sendingAt, at: reported }))),
  );
  const fromSql = await evaluate<Date>(rows, clampReportedAtSql('r.r_at', 'm', '$2'), [now]);
  expect(fromSql.map((d) => d.toISOString())).toEqual(rows.map((r) => clampReportedAt(r.at, r, now).toISOString()));
});

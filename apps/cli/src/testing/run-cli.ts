import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { startTestApi, type TestApi } from '@smsgw/api/testing';
import { createSql, type Db, type Sql } from '@smsgw/db';
import { createDb } from '@smsgw/db/prisma';
import { createTestDatabase, type TestDatabase } from '@smsgw/db/testing';
import { runSmsgw } from '../run.ts';

export const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command args…` in the repository, as the operator would, with more environment variables. */
export async function runProcess(command: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * `smsgw <args>` run in this process, as the bin runs it (main.ts only passes the process's arguments,
 * environment and streams): a process per command would cost seconds each. The bin itself is run as
 * a process by cli.int.test.ts.
 */
export async function runCli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runSmsgw(args, { ...process.env, ...env }, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

/** The one JSON document of an output (stdout, or the error line on stderr). */
export function json(text: string): Record<string, unknown> {
  return JSON.parse(text.trim()) as Record<string, unknown>;
}

/** The output of a command that succeeded. */
export function ok(result: CliResult): Record<string, unknown> {
  expect(result, result.stderr).toMatchObject({ code: 0 });
  return json(result.stdout);
}

/** A failure: its exit code and JSON error line, and nothing on stdout. */
export function failure(result: CliResult): { code: number; error: unknown; message: string } {
  expect(result.stdout).toBe('');
  const body = json(result.stderr);
  expect(Object.keys(body)).toEqual(['error', 'message']);
  return { code: result.code, error: body.error, message: body.message as string };
}

export const uniqueName = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

export interface CliDatabase {
  db: Db;
  /** The same database on a pg pool (what the API's hot paths use). */
  sql: Sql;
  url: string;
  /** `smsgw <args>` against this database. */
  smsgw(...args: string[]): Promise<CliResult>;
  smsgwWith(env: Record<string, string>, ...args: string[]): Promise<CliResult>;
  close(): Promise<void>;
}

/** A database of the test file's own (cloned from the migrated template) and the CLI run on it. */
export async function cliDatabase(): Promise<CliDatabase> {
  const database: TestDatabase = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  const db = createDb({ url: database.url, poolSize: 2 });
  const sql = createSql({ url: database.url, poolSize: 2 });
  const smsgwWith = (env: Record<string, string>, ...args: string[]) => runCli({ DATABASE_URL: database.url, ...env }, ...args);
  return {
    db,
    sql,
    url: database.url,
    smsgw: (...args) => smsgwWith({}, ...args),
    smsgwWith,
    async close() {
      await Promise.all([db.$disconnect(), sql.end()]);
      await database.drop();
    },
  };
}

export interface CliOnApi {
  /** The API (its database, queues, `app.inject`), started before the file's tests. */
  readonly api: TestApi;
  smsgw(...args: string[]): Promise<CliResult>;
  smsgwWith(env: Record<string, string>, ...args: string[]): Promise<CliResult>;
}

/**
 * For a test file: an API of its own (database and queue prefix) and the CLI run on the same
 * database and queues, so that what one does shows in the other. `env` goes to both.
 */
export function cliOnApi(env: Record<string, string> = {}): CliOnApi {
  let api: TestApi | undefined;
  beforeAll(async () => {
    api = await startTestApi(env);
  });
  afterAll(async () => {
    await api?.close();
  });
  const smsgwWith = (more: Record<string, string>, ...args: string[]) =>
    runCli({ ...env, DATABASE_URL: api!.databaseUrl, QUEUE_PREFIX: api!.config.QUEUE_PREFIX, ...more }, ...args);
  return {
    get api() {
      return api!;
    },
    smsgw: (...args) => smsgwWith({}, ...args),
    smsgwWith,
  };
}

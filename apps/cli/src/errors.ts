import { ConfigError } from '@smsgw/config';
import { isAppError, isUnavailable } from '@smsgw/core';
import { UserNameTakenError } from '@smsgw/db';

/**
 * The kinds of failure of a command, each with its exit code: what a script that runs `smsgw` can
 * tell apart without reading the message. Listed in `smsgw --help`.
 */
export const EXIT_CODES = {
  unexpected: { exit: 1, meaning: 'an unexpected failure (a bug); the message says what happened' },
  usage: { exit: 2, meaning: 'the command line or a value in it is wrong (where the API answers 400)' },
  not_found: { exit: 3, meaning: 'the user, key, device, message or webhook named does not exist (404)' },
  conflict: { exit: 4, meaning: 'the name is taken, or the state forbids it: a disabled user or webhook (409)' },
  unavailable: { exit: 5, meaning: 'the environment is wrong, or Postgres or Redis cannot be reached or is not migrated' },
  refused: { exit: 6, meaning: 'a send refused as the API refuses it: quota exceeded (402) or no device available (503)' },
} as const;

export type FailureKind = keyof typeof EXIT_CODES;

/** A failure of a command: `code` is the `error` of the JSON line, as in the API's error bodies. */
export class CliError extends Error {
  override name = 'CliError';

  constructor(
    readonly kind: FailureKind,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError('usage', 'usage', message);
export const notFound = (message: string) => new CliError('not_found', 'not_found', message);

// No such database ("invalid catalog name"), or a table or column missing (Postgres's codes and
// Prisma's own): the database is not migrated, or not to this version.
const NOT_MIGRATED = new Set(['3D000', '42P01', '42703', 'P2021', 'P2022']);

/** The last line of an error's message: Prisma puts the reason after a description of the call. */
const reason = (error: unknown) => ((error as Error)?.message ?? String(error)).trim().split('\n').at(-1)?.trim() ?? '';

function errorCodes(error: unknown): unknown[] {
  const e = error as {
    code?: unknown;
    meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown } } };
    cause?: { originalCode?: unknown; code?: unknown };
  };
  return [e.code, e.meta?.code, e.meta?.driverAdapterError?.cause?.originalCode, e.cause?.originalCode, e.cause?.code];
}

/** Any error as the failure the operator sees. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ConfigError) return new CliError('unavailable', 'configuration', error.message.replace(/\n\s*/g, ' '));
  if (error instanceof UserNameTakenError) return new CliError('conflict', 'user_name_taken', error.message);
  if (isAppError(error)) {
    const kind: FailureKind =
      error.code === 'service_unavailable'
        ? 'unavailable'
        : error.status === 400
          ? 'usage'
          : error.status === 404
            ? 'not_found'
            : error.status === 409 || error.status === 422
              ? 'conflict'
              : error.status === 402 || error.status === 503
                ? 'refused'
                : 'unexpected';
    return new CliError(kind, error.code, error.message);
  }
  if (errorCodes(error).some((code) => typeof code === 'string' && NOT_MIGRATED.has(code))) {
    return new CliError('unavailable', 'database_not_migrated', 'The database of DATABASE_URL does not exist or is not migrated: run ./pnpmw db:migrate.');
  }
  if (isUnavailable(error)) {
    const why = reason(error);
    return new CliError('unavailable', 'database_unavailable', `Cannot reach Postgres (DATABASE_URL): ${why}${why.endsWith('?') ? '' : '. Is it running?'}`);
  }
  return new CliError('unexpected', 'unexpected', reason(error));
}

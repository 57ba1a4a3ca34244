import type { Static, TObject } from 'typebox';
import { ConfigError, loadConfig } from './env.ts';

/**
 * Start-up errors of the processes, each one line that names the variable and the fix, then exit 1:
 * never a stack, like the checks of the database and Redis (`databaseProblem`, `redisProblem`).
 */

/** A failure at start whose message is the one line to print (a listen that failed, say). */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** For a process's start: prints a StartupError or a ConfigError as it is (no stack) and exits 1; rethrows anything else. */
export function exitOnStartupError(error: unknown): never {
  if (!(error instanceof StartupError || error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

/** loadConfig for a process's start: a wrong environment is printed one line per variable, and the process exits 1. */
export function loadConfigOrExit<T extends TObject>(schema: T, env: Record<string, string | undefined> = process.env): Static<T> {
  try {
    return loadConfig(schema, env);
  } catch (error) {
    return exitOnStartupError(error);
  }
}

/** Where a process listens, and the variables that say so (HOST and PORT for the API). */
export interface ListenAddress {
  host: string;
  port: number;
  hostVariable: string;
  portVariable: string;
}

const ADDRESSES = '127.0.0.1, or 0.0.0.0 to listen on every interface (containers)';

/** The one line for a listen that failed, naming the variable and the fix; undefined for an error of another kind. */
export function listenProblem(error: unknown, { host, port, hostVariable, portVariable }: ListenAddress): string | undefined {
  switch ((error as { code?: string } | undefined)?.code) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is in use (${portVariable}): stop what holds it, or set ${portVariable} to a free port.`;
    case 'EACCES':
      return `Port ${port} on ${host} needs privileges this process lacks (${portVariable}): set ${portVariable} to a port above 1023, or put a reverse proxy in front.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `${hostVariable} ${host} does not resolve to an address: set ${hostVariable} to an address of this machine, e.g. ${ADDRESSES}.`;
    case 'EADDRNOTAVAIL':
      return `${hostVariable} ${host} is not an address of this machine: set ${hostVariable} to one, e.g. ${ADDRESSES}.`;
    default:
      return undefined;
  }
}

/** `listen()`, with a failure listenProblem knows turned into a StartupError of that line. */
export async function listening<T>(listen: () => Promise<T>, address: ListenAddress): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    const line = listenProblem(error, address);
    throw line ? new StartupError(line, { cause: error }) : error;
  }
}

import pretty from 'pino-pretty';

export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LogOutputOptions {
  /** Whether standard output is a terminal (auto, colours). */
  isTty?: boolean;
  /** Where pretty lines go; standard output by default. */
  destination?: NodeJS.WritableStream;
}

/**
 * Where a process's pino logger writes: undefined keeps pino's JSON lines on stdout; for a person at
 * a terminal (LOG_FORMAT=pretty, or auto on a TTY) a synchronous pino-pretty stream, so that the
 * last lines before an exit are never lost and no worker thread has to resolve the package.
 */
export function logStream(format: LogFormat, options: LogOutputOptions = {}): NodeJS.WritableStream | undefined {
  const isTty = options.isTty ?? process.stdout.isTTY === true;
  if (format === 'json' || (format === 'auto' && !isTty)) return undefined;
  return pretty({
    sync: true,
    colorize: isTty,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
    ...(options.destination && { destination: options.destination }),
  });
}

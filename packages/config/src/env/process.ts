import { Type } from 'typebox';
import { Integer } from './integer.ts';

export const LogEnv = Type.Object({
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
  }),
  LOG_FORMAT: Type.Enum(['auto', 'json', 'pretty'], {
    default: 'auto',
    description:
      'json: one JSON object a line (for log collectors); pretty: one readable line per entry; auto: pretty when standard output is a terminal, else json.',
  }),
});

/**
 * The long-running services' memory: V8 lets a busy process's heap grow to several times what it
 * holds before it collects (a 45 MB live heap showed as 200-270 MB resident under bench:e2e).
 */
export const MemoryEnv = Type.Object({
  HEAP_GROWTH_PERCENT: Integer({
    default: 25,
    minimum: 0,
    maximum: 300,
    description:
      "How far (percent) the API or dispatcher lets its heap grow beyond what it held after a full collection before collecting again; lower keeps memory down at some CPU. 0: V8's own choice (up to 4 times).",
  }),
});

/**
 * The environment of every smsgw process, in one place: the groups of variables in `env/` (stores,
 * process, fleet, api, dispatcher, tools), each process's schema made of them here. Each process
 * reads its own with `loadConfig`, once at start, and fails fast with a message naming the variable
 * that is wrong.
 */
import { Type, type Static, type TObject } from 'typebox';
import { Value } from 'typebox/value';
import { convertText } from './convert.ts';
import { DatabaseEnv, DirectDatabaseEnv, RedisEnv } from './env/stores.ts';
import { LogEnv, MemoryEnv } from './env/process.ts';
import { DeviceEnv, SendingEnv } from './env/fleet.ts';
import { ApiEnv, DeviceProtocolEnv } from './env/api.ts';
import { DispatcherEnv, WebhookEnv } from './env/dispatcher.ts';

export * from './env/stores.ts';
export * from './env/process.ts';
export * from './env/fleet.ts';
export * from './env/api.ts';
export * from './env/dispatcher.ts';
export * from './env/tools.ts';

/** The API: every group but the dispatcher's own. */
export const ApiConfigSchema = Type.Evaluate(
  Type.Intersect([DatabaseEnv, DirectDatabaseEnv, RedisEnv, LogEnv, MemoryEnv, SendingEnv, DeviceEnv, ApiEnv, DeviceProtocolEnv, WebhookEnv]),
);
export type ApiConfig = Static<typeof ApiConfigSchema>;

export const DispatcherConfigSchema = Type.Evaluate(
  Type.Intersect([DatabaseEnv, RedisEnv, LogEnv, MemoryEnv, SendingEnv, DeviceEnv, DispatcherEnv, WebhookEnv]),
);
export type DispatcherConfig = Static<typeof DispatcherConfigSchema>;

/**
 * The operator CLI (`smsgw`): the database, and Redis for the commands that enqueue (`message send`,
 * `webhook test`) under the same QUEUE_PREFIX and command timeout as the API; HOST and PORT make the
 * default PUBLIC_URL of a pairing.
 */
export const CliConfigSchema = Type.Evaluate(
  Type.Intersect([DatabaseEnv, RedisEnv, LogEnv, SendingEnv, DeviceEnv, Type.Pick(ApiEnv, ['HOST', 'PORT', 'REDIS_COMMAND_TIMEOUT_MS']), DeviceProtocolEnv]),
);
export type CliConfig = Static<typeof CliConfigSchema>;

/** The migrator (`./pnpmw db:migrate`, the compose `migrate` service): on DATABASE_DIRECT_URL when set. */
export const MigrateConfigSchema = Type.Evaluate(Type.Intersect([DatabaseEnv, DirectDatabaseEnv]));
export type MigrateConfig = Static<typeof MigrateConfigSchema>;

/** Settings that the API and the dispatchers must agree on; each checks the others' at start (packages/queue, process-settings). */
export const SHARED_SETTINGS = [...Object.keys(SendingEnv.properties), ...Object.keys(DeviceEnv.properties), 'WEBHOOK_ALLOW_PRIVATE'] as const;

/** The values of SHARED_SETTINGS in `config`. */
export function sharedSettings(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SHARED_SETTINGS.map((name) => [name, config[name]]));
}

/** A wrong environment: one line per variable (`problems`), each naming it and the fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';

  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** Reads the variables of `schema` from `env`, applies defaults, converts numbers, and checks them. */
export function loadConfig<T extends TObject>(schema: T, env: Record<string, string | undefined> = process.env): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const value = convertText(schema, Value.Default(schema, raw));
  const errors = Value.Errors(schema, value);
  if (errors.length > 0) {
    const names = errors.flatMap((error) => (error.keyword === 'required' ? requiredNames(error) : [error.instancePath.replace(/^\//, '').split('/')[0]!]));
    throw new ConfigError([...new Set(names)].map((name) => problem(name, schema.properties[name] as Variable | undefined, name in raw)));
  }
  return value as Static<T>;
}

function requiredNames(error: { params: object }): string[] {
  return (error.params as { requiredProperties?: string[] }).requiredProperties ?? [];
}

interface Variable {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  default?: unknown;
  description?: string;
}

/** What a variable must be, in words: "a whole number from 0 to 65535", "one of json, pretty". */
export function expectation(variable: Variable): string {
  if (variable.type === 'integer' || variable.type === 'number') {
    const { minimum: min, maximum: max } = variable;
    const range =
      min !== undefined && max !== undefined
        ? ` from ${min} to ${max}`
        : min !== undefined
          ? ` of ${min} or more`
          : max !== undefined
            ? ` of at most ${max}`
            : '';
    return `${variable.type === 'integer' ? 'a whole number' : 'a number'}${range}`;
  }
  if (variable.type === 'boolean') return 'true or false';
  if (Array.isArray(variable.enum)) return `one of ${variable.enum.join(', ')}`;
  const rules = [
    ...(variable.minLength !== undefined ? [`of at least ${variable.minLength} characters`] : []),
    ...(variable.pattern !== undefined ? [`matching ${variable.pattern}`] : []),
  ];
  return ['text', ...rules].join(' ');
}

/** The one line that names a wrong or missing variable and the fix (issue 24: a start-up error is one line, never a stack). */
function problem(name: string, variable: Variable | undefined, given: boolean): string {
  const what = variable ? expectation(variable) : 'a valid value';
  const about = variable?.description ? ` ${variable.description}` : '';
  if (!given) return `${name} is not set: set it to ${what}.${about}`;
  const fallback = variable?.default !== undefined ? `, or unset it for the default (${String(variable.default)})` : '';
  return `Invalid ${name}: set it to ${what}${fallback}.${about}`;
}

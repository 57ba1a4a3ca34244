import { describe, expect, it } from 'vitest';
import { ApiConfigSchema, CliConfigSchema, ConfigError, expectation, loadConfig, publicUrl, trustProxy } from './env.ts';

const JWT_SECRET = 's'.repeat(32);

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig(ApiConfigSchema, { JWT_SECRET })).toMatchObject({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/smsgw',
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: 'smsgw',
      LOG_LEVEL: 'info',
      MONTHLY_QUOTA_DEFAULT: 10000,
      MAX_RECIPIENTS: 10000,
      DEVICE_AVAILABLE_SECONDS: 1200,
      HOST: '127.0.0.1',
      PORT: 3000,
      JWT_SECRET,
      JWT_TTL_SECONDS: 900,
      RATE_LIMIT_PER_MINUTE: 1200,
    });
  });

  it('gives every variable that has a default its default, and nothing else', () => {
    const config: Record<string, unknown> = loadConfig(ApiConfigSchema, { JWT_SECRET });
    const expected: Record<string, unknown> = { JWT_SECRET };
    for (const [name, property] of Object.entries(ApiConfigSchema.properties)) {
      const fallback = (property as { default?: unknown }).default;
      if (fallback !== undefined) expected[name] = fallback;
    }
    expect(config).toEqual(expected);
  });

  it('converts numeric variables to numbers', () => {
    const config = loadConfig(ApiConfigSchema, { JWT_SECRET, PORT: '8080', MAX_RECIPIENTS: '25', JWT_TTL_SECONDS: '60', MONTHLY_QUOTA_DEFAULT: '0' });
    expect(config.PORT).toBe(8080);
    expect(config.MAX_RECIPIENTS).toBe(25);
    expect(config.JWT_TTL_SECONDS).toBe(60);
    expect(config.MONTHLY_QUOTA_DEFAULT).toBe(0);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig(ApiConfigSchema, { JWT_SECRET, PORT: '', LOG_LEVEL: '' })).toMatchObject({ PORT: 3000, LOG_LEVEL: 'info' });
  });

  it('ignores variables that are not in the schema', () => {
    expect(loadConfig(CliConfigSchema, { JWT_SECRET, JWT_TTL_SECONDS: 'nonsense', HOME: '/root' })).not.toHaveProperty('JWT_TTL_SECONDS');
  });

  it.each(['abc', '70000', '-1', '80.5', '3000abc', 'true', '0x50'])('refuses PORT=%j in one line that names PORT and the fix', (port) => {
    const error = configError(() => loadConfig(ApiConfigSchema, { JWT_SECRET, PORT: port }));
    expect(error.problems).toEqual(['Invalid PORT: set it to a whole number from 0 to 65535, or unset it for the default (3000). Port the API listens on.']);
    expect(error.message).toBe(error.problems[0]);
  });

  it('requires JWT_SECRET for the API and names it', () => {
    const error = configError(() => loadConfig(ApiConfigSchema, {}));
    expect(error.problems).toEqual([expect.stringMatching(/^JWT_SECRET is not set: set it to text of at least 32 characters\. /)]);
  });

  it('refuses a JWT_SECRET shorter than 32 characters and names it', () => {
    const error = configError(() => loadConfig(ApiConfigSchema, { JWT_SECRET: 's'.repeat(31) }));
    expect(error.problems).toEqual([expect.stringMatching(/^Invalid JWT_SECRET: set it to text of at least 32 characters\. /)]);
  });

  it('does not require JWT_SECRET for the CLI', () => {
    expect(loadConfig(CliConfigSchema, {})).not.toHaveProperty('JWT_SECRET');
  });

  it('names every wrong variable at once, one line each', () => {
    const error = configError(() => loadConfig(ApiConfigSchema, { PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://db' }));
    expect(error.problems.map((line) => /^(?:Invalid )?([A-Z_]+)/.exec(line)![1]).sort()).toEqual(['DATABASE_URL', 'JWT_SECRET', 'LOG_LEVEL', 'PORT']);
    expect(error.message.split('\n')).toEqual(error.problems);
    expect(error.problems).toContain(
      'Invalid LOG_LEVEL: set it to one of fatal, error, warn, info, debug, trace, silent, or unset it for the default (info). pino log level: fatal, error, warn, info, debug, trace or silent.',
    );
  });

  it.each([
    [{ type: 'integer', minimum: 0, maximum: 65535 }, 'a whole number from 0 to 65535'],
    [{ type: 'integer', minimum: 1 }, 'a whole number of 1 or more'],
    [{ type: 'number', maximum: 1 }, 'a number of at most 1'],
    [{ type: 'boolean' }, 'true or false'],
    [{ enum: ['json', 'pretty'] }, 'one of json, pretty'],
    [{ type: 'string', minLength: 32 }, 'text of at least 32 characters'],
    [{ type: 'string', pattern: '^rediss?://' }, 'text matching ^rediss?://'],
    [{ type: 'string' }, 'text'],
  ])('says what %j must be: %s', (variable, words) => {
    expect(expectation(variable)).toBe(words);
  });

  it('reads process.env when no environment is passed', () => {
    const saved = process.env.QUEUE_PREFIX;
    process.env.QUEUE_PREFIX = 'from-process-env';
    try {
      expect(loadConfig(CliConfigSchema).QUEUE_PREFIX).toBe('from-process-env');
    } finally {
      if (saved === undefined) delete process.env.QUEUE_PREFIX;
      else process.env.QUEUE_PREFIX = saved;
    }
  });
});

describe('derived settings', () => {
  it('reads TRUST_PROXY as addresses or on/off', () => {
    const read = (TRUST_PROXY?: string) => trustProxy(loadConfig(ApiConfigSchema, { JWT_SECRET, ...(TRUST_PROXY && { TRUST_PROXY }) }));
    expect(read()).toBe(false);
    expect(read('false')).toBe(false);
    expect(read('true')).toBe(true);
    expect(read('127.0.0.1,10.0.0.0/8,::1')).toEqual(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(configError(() => read('everyone')).message).toContain('TRUST_PROXY');
  });

  it('derives PUBLIC_URL from HOST and PORT unless it is set, without a trailing slash', () => {
    expect(publicUrl(loadConfig(ApiConfigSchema, { JWT_SECRET, PORT: '8080' }))).toBe('http://127.0.0.1:8080');
    expect(publicUrl(loadConfig(ApiConfigSchema, { JWT_SECRET, HOST: '0.0.0.0' }))).toBe('http://127.0.0.1:3000');
    expect(publicUrl(loadConfig(ApiConfigSchema, { JWT_SECRET, PUBLIC_URL: 'https://sms.example.com/' }))).toBe('https://sms.example.com');
    expect(configError(() => loadConfig(ApiConfigSchema, { JWT_SECRET, PUBLIC_URL: 'sms.example.com' })).message).toContain('PUBLIC_URL');
  });
});

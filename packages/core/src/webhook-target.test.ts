import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, guardedLookup, parseWebhookUrl, WebhookTargetError, type Resolver } from './webhook-target.ts';

const stub =
  (answers: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
const resolve = stub({
  'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'internal.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '192.168.1.10'],
  'mapped.example': ['::ffff:127.0.0.1'],
  'empty.example': [],
});
const strict = { allowPrivate: false, resolve };

describe('parseWebhookUrl', () => {
  it.each([
    ['ftp://public.example/', 'must use http or https'],
    ['javascript:alert(1)', 'must use http or https'],
    ['not-a-url', 'not a valid absolute URL'],
    ['not a url', 'must not contain spaces'],
    ['https://public.example/hook\r\nX-Injected: 1', 'must not contain spaces, line breaks'],
    ['https://public.example/a b', 'must not contain spaces'],
    ['https://public.example/\u0000', 'control characters'],
    ['/relative/path', 'not a valid absolute URL'],
    ['https://user:pass@public.example/', 'must not contain a user name or password'],
    [`https://public.example/${'a'.repeat(2000)}`, 'longer than 2000 characters'],
  ])('refuses %s', (url, message) => {
    expect(() => parseWebhookUrl(url)).toThrow(message);
  });

  it('accepts http and https URLs with ports, paths and queries', () => {
    expect(parseWebhookUrl('https://public.example:8443/hooks?x=1').href).toBe('https://public.example:8443/hooks?x=1');
  });
});

describe('checkWebhookUrl', () => {
  it.each([
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://100.64.0.1/',
    'http://224.0.0.1/',
  ])('refuses the internal address %s', async (url) => {
    await expect(checkWebhookUrl(url, strict)).rejects.toThrow(/internal address/);
  });

  it.each(['http://internal.example/', 'http://mixed.example/', 'http://mapped.example/'])('refuses %s, a name with an internal address', async (url) => {
    await expect(checkWebhookUrl(url, strict)).rejects.toThrow(/resolves to .*internal address/);
  });

  it('says which address it refused, and for a name what the name resolved to', async () => {
    await expect(checkWebhookUrl('http://127.0.0.1/', strict)).rejects.toThrow(
      'The address 127.0.0.1 is a loopback, private or otherwise internal address; webhooks must reach a public address.',
    );
    await expect(checkWebhookUrl('http://internal.example/', strict)).rejects.toThrow(
      'The host internal.example resolves to 10.1.2.3, a loopback, private or otherwise internal address; webhooks must reach a public address.',
    );
  });

  it('refuses a name that does not resolve, or resolves to nothing', async () => {
    await expect(checkWebhookUrl('https://nowhere.example/', strict)).rejects.toThrow('The host nowhere.example does not resolve.');
    await expect(checkWebhookUrl('https://empty.example/', strict)).rejects.toThrow('does not resolve');
  });

  it('accepts public names and addresses', async () => {
    await expect(checkWebhookUrl('https://public.example/hook', strict)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('https://93.184.215.14/hook', strict)).resolves.toBeInstanceOf(URL);
  });

  it('accepts internal targets when the operator allows them, but still only http(s)', async () => {
    const open = { allowPrivate: true, resolve };
    await expect(checkWebhookUrl('http://127.0.0.1:9/hook', open)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('http://internal.example/', open)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookUrl('file:///etc/passwd', open)).rejects.toBeInstanceOf(WebhookTargetError);
  });
});

describe('guardedLookup (the check at connect time)', () => {
  const lookup = (policy: Parameters<typeof guardedLookup>[0], host: string, all: boolean) =>
    new Promise<{ error: unknown; result: unknown[] }>((done) => {
      guardedLookup(policy)(host, { all }, (error: unknown, ...result: unknown[]) => done({ error, result }));
    });

  it('answers like dns.lookup for a public name, one address or all of them', async () => {
    expect(await lookup(strict, 'public.example', false)).toEqual({ error: null, result: ['93.184.215.14', 4] });
    expect(await lookup(strict, 'public.example', true)).toEqual({
      error: null,
      result: [
        [
          { address: '93.184.215.14', family: 4 },
          { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
        ],
      ],
    });
  });

  it('fails the connection when the name now resolves to an internal address', async () => {
    const { error } = await lookup(strict, 'mixed.example', true);
    expect(error).toBeInstanceOf(WebhookTargetError);
    expect((error as Error).message).toMatch(/192\.168\.1\.10/);
  });

  it('lets internal addresses through when allowed', async () => {
    expect(await lookup({ allowPrivate: true, resolve }, 'internal.example', false)).toEqual({ error: null, result: ['10.1.2.3', 4] });
  });
});

import { describe, expect, it } from 'vitest';
import { listening, listenProblem, StartupError } from './startup.ts';

const API = { host: 'example.invalid', port: 3000, hostVariable: 'HOST', portVariable: 'PORT' };

describe('listenProblem', () => {
  it.each([
    ['EADDRINUSE', 'Port 3000 on example.invalid is in use (PORT): stop what holds it, or set PORT to a free port.'],
    ['EACCES', 'Port 3000 on example.invalid needs privileges this process lacks (PORT): set PORT to a port above 1023, or put a reverse proxy in front.'],
    ['ENOTFOUND', expect.stringMatching(/^HOST example\.invalid does not resolve to an address: set HOST to an address of this machine/)],
    ['EADDRNOTAVAIL', expect.stringMatching(/^HOST example\.invalid is not an address of this machine: set HOST to one/)],
  ])('names the variable and the fix for %s', (code, line) => {
    expect(listenProblem(Object.assign(new Error('listen failed'), { code }), API)).toEqual(line);
  });

  it('leaves other errors alone', () => {
    expect(listenProblem(new Error('boom'), API)).toBeUndefined();
  });
});

describe('listening', () => {
  it('turns a listen failure it knows into a StartupError of one line, and passes others on', async () => {
    const inUse = listening(() => Promise.reject(Object.assign(new Error('in use'), { code: 'EADDRINUSE' })), API);
    await expect(inUse).rejects.toBeInstanceOf(StartupError);
    await expect(inUse).rejects.toThrow(/^Port 3000 on example\.invalid is in use \(PORT\)/);
    await expect(listening(() => Promise.reject(new Error('boom')), API)).rejects.toThrow(/^boom$/);
    await expect(listening(() => Promise.resolve(7), API)).resolves.toBe(7);
  });
});

import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';

/**
 * A Linux network namespace standing for another host: a veth pair joins it to this machine's
 * namespace, `gateway` on this side and `address` on its side (a /30 of 10.213.0.0/16 of its own).
 * Processes started with `command` see only its loopback and the link: Postgres and Redis, on this
 * machine's loopback, are reached through forwarders listening on `gateway` (delay-link.ts).
 */
export interface NetnsHost {
  name: string;
  /** This machine's side of the link. */
  gateway: string;
  /** The namespace's side: where its listening processes are reached. */
  address: string;
  /** The command prefix that runs a program inside the namespace. */
  command: string[];
  remove(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** Namespaces of earlier runs that died before their clean-up (their names start with `smsgw-`). */
export function removeLeftoverHosts(): void {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith('smsgw-'));
  for (const name of names) ip('netns', 'delete', name);
}

export function createNetnsHost(label: string): NetnsHost {
  const id = randomInt(1, 16_000);
  const name = `smsgw-${label}-${id}`;
  const outside = `sgo${id}`;
  const inside = `sgi${id}`;
  const base = id * 4;
  const net = `10.213.${Math.floor(base / 256)}`;
  const gateway = `${net}.${(base % 256) + 1}`;
  const address = `${net}.${(base % 256) + 2}`;
  ip('netns', 'add', name);
  try {
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    ip('link', 'set', inside, 'netns', name);
    ip('addr', 'add', `${gateway}/30`, 'dev', outside);
    ip('link', 'set', outside, 'up');
    ip('-n', name, 'addr', 'add', `${address}/30`, 'dev', inside);
    ip('-n', name, 'link', 'set', inside, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
  } catch (error) {
    ip('netns', 'delete', name);
    throw error;
  }
  return {
    name,
    gateway,
    address,
    command: ['ip', 'netns', 'exec', name],
    // Deleting the namespace deletes its end of the veth pair, and with it this end.
    remove: () => ip('netns', 'delete', name),
  };
}

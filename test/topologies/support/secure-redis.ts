import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { commandAs, freePorts, startServers, until, type ServerAccess } from './redis-servers.ts';

/**
 * Redis as managed services hand it out: TLS only, with a certificate of a private CA, and an ACL
 * user with a password (the default user off). One server, a 3-primary cluster, or a primary
 * watched by a Sentinel that has a password of its own. The certificates are made with Debian's openssl.
 */
const run = promisify(execFile);

export interface Certificates {
  dir: string;
  /** The CA's certificate (PEM file): what NODE_EXTRA_CA_CERTS names for the processes. */
  ca: string;
  cert: string;
  key: string;
  remove(): Promise<void>;
}

/** A CA and a server certificate for 127.0.0.1 signed by it. */
export async function makeCertificates(): Promise<Certificates> {
  const dir = await mkdtemp(join(tmpdir(), 'smsgw-redis-tls-'));
  const file = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', ['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=smsgw test CA']);
  await run('openssl', ['req', ...ec, '-keyout', file('redis.key'), '-out', file('redis.csr'), '-subj', '/CN=127.0.0.1']);
  await writeFile(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await run(
    'openssl',
    ['x509', '-req', '-in', file('redis.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial'].concat([
      '-out',
      file('redis.crt'),
      '-days',
      '2',
      '-extfile',
      file('san.ext'),
    ]),
  );
  return { dir, ca: file('ca.crt'), cert: file('redis.crt'), key: file('redis.key'), remove: () => rm(dir, { recursive: true, force: true }) };
}

export const DATA_USER = 'smsgw';
export const DATA_PASSWORD = 'data-nodes-secret';
export const SENTINEL_PASSWORD = 'sentinels-secret';

/** The data nodes' ACL: the default user off, smsgw's user with every command and key. */
const DATA_ACL = `user default off\nuser ${DATA_USER} on >${DATA_PASSWORD} ~* &* +@all\nmasteruser ${DATA_USER}\nmasterauth ${DATA_PASSWORD}\n`;

export interface SecureRedis {
  /** REDIS_CLUSTER_NODES, or REDIS_SENTINELS and REDIS_SENTINEL_NAME, with the user, password and TLS. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

async function access(certificates: Certificates): Promise<ServerAccess> {
  return { ca: await readFile(certificates.ca), username: DATA_USER, password: DATA_PASSWORD };
}

/** 3 primaries over TLS, each with smsgw's user and password, their slots assigned by `redis-cli --cluster create`. */
export async function startSecureCluster(certificates: Certificates): Promise<SecureRedis> {
  const ports = await freePorts(3);
  const user = await access(certificates);
  const conf = (port: number) => `cluster-enabled yes\ncluster-config-file nodes-${port}.conf\ncluster-node-timeout 1000\n${DATA_ACL}`;
  const servers = await startServers(
    'secure-cluster',
    ports.map((port) => ({ port, conf: conf(port), access: user })),
    certificates,
  );
  try {
    const tls = ['--tls', '--cacert', certificates.ca, '--user', DATA_USER, '--pass', DATA_PASSWORD, '--no-auth-warning'];
    await run('redis-cli', [...tls, '--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    await until('the cluster is ok on every node', 30_000, async () => {
      const states = await Promise.all(ports.map((port) => commandAs(user, port, 'CLUSTER', 'INFO')));
      return states.every((info) => String(info).includes('cluster_state:ok'));
    });
  } catch (error) {
    await servers.stop();
    throw error;
  }
  const env = { REDIS_CLUSTER_NODES: ports.map((port) => `127.0.0.1:${port}`).join(','), ...clientEnv(certificates) };
  return { env, stop: servers.stop };
}

/** One server over TLS with smsgw's user, named by REDIS_URL in the plain scheme: REDIS_TLS turns TLS on. */
export async function startSecureServer(certificates: Certificates): Promise<SecureRedis> {
  const [port] = await freePorts(1);
  const servers = await startServers('secure-server', [{ port: port!, conf: DATA_ACL, access: await access(certificates) }], certificates);
  return { env: { REDIS_URL: `redis://127.0.0.1:${port}`, ...clientEnv(certificates) }, stop: servers.stop };
}

/** A primary over TLS with smsgw's user, and a Sentinel over TLS with a password of its own that watches it. */
export async function startSecureSentinel(certificates: Certificates): Promise<SecureRedis> {
  const name = 'smsgw';
  const [primaryPort, sentinelPort] = await freePorts(2);
  const user = await access(certificates);
  const primary = await startServers('secure-primary', [{ port: primaryPort!, conf: DATA_ACL, access: user }], certificates);
  const watch = [
    `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 1`,
    `sentinel auth-user ${name} ${DATA_USER}`,
    `sentinel auth-pass ${name} ${DATA_PASSWORD}`,
    `requirepass ${SENTINEL_PASSWORD}`,
    `sentinel sentinel-pass ${SENTINEL_PASSWORD}`,
  ].join('\n');
  const sentinelAccess = { ca: user.ca!, password: SENTINEL_PASSWORD };
  let sentinel: Awaited<ReturnType<typeof startServers>>;
  try {
    sentinel = await startServers('secure-sentinel', [{ port: sentinelPort!, conf: `${watch}\n`, sentinel: true, access: sentinelAccess }], certificates);
  } catch (error) {
    await primary.stop();
    throw error;
  }
  const stop = async () => {
    await sentinel.stop();
    await primary.stop();
  };
  try {
    await until('the Sentinel names the primary', 10_000, async () => {
      const address = await commandAs(sentinelAccess, sentinelPort!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
      return Array.isArray(address) && Number(address[1]) === primaryPort;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const env = {
    REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
    REDIS_SENTINEL_NAME: name,
    REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
    // One primary without a replica: no replica to wait for.
    REDIS_WAIT_REPLICAS: '0',
    ...clientEnv(certificates),
  };
  return { env, stop };
}

/** What smsgw's processes are given: the data nodes' user and password, TLS, and the CA to trust. */
function clientEnv(certificates: Certificates): Record<string, string> {
  return { REDIS_USERNAME: DATA_USER, REDIS_PASSWORD: DATA_PASSWORD, REDIS_TLS: 'true', NODE_EXTRA_CA_CERTS: certificates.ca };
}

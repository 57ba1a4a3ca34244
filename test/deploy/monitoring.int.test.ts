import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { SmsgwClient } from '@smsgw/client';
import { generateWebhookSecret, newId } from '@smsgw/core';
import { createDevice } from '@smsgw/db';
import { freePort } from '../support/cluster.ts';
import { e2eForAll } from '../support/e2e-fixture.ts';
import { exposedSeries, missingFrom, scrapedSeries } from '../support/promql.ts';

/**
 * The monitoring profile's files (deploy/; docs/operations.md, "Monitoring"): Prometheus's own
 * checks of the rules and config, and every metric and label that a rule or a dashboard reads
 * against the live /metrics of a real API and dispatcher after a message went through a simulated
 * device and its webhook events out. A name that smsgw does not serve would be an alert that never
 * fires or a panel that stays empty, and nothing else would notice.
 */
const RULES = 'deploy/prometheus/smsgw.rules.yml';
const DASHBOARDS = 'deploy/grafana/dashboards';
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable, written as Grafana reads it.
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
const run = promisify(execFile);

/** promtool's output; fails with it (or with how to install promtool) when promtool does. */
async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args);
    return stdout + stderr;
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: string | number; stdout?: string; stderr?: string };
    if (code === 'ENOENT') throw new Error("promtool not found: Debian's `prometheus` package has it (.ci/run installs it)");
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

interface Panel {
  title?: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  targets?: { expr?: string; datasource?: { type?: string; uid?: string } }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string }[] };
}

const dashboards = readdirSync(DASHBOARDS)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(DASHBOARDS, file), 'utf8')) as Dashboard }));
const panelsOf = (panels: Panel[]): Panel[] => panels.flatMap((panel) => [panel, ...panelsOf(panel.panels ?? [])]);

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

/** Every PromQL expression of the rules and the dashboards, named by where it is. */
const expressions = [
  ...rules.map((rule) => ({ where: `${RULES}: ${rule.alert}`, expr: rule.expr })),
  ...dashboards.flatMap(({ file, dashboard }) =>
    panelsOf(dashboard.panels).flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `${file}: ${panel.title}`, expr: target.expr ?? '' }))),
  ),
];

describe('Prometheus files, checked by promtool', () => {
  it('the alert rules are valid', async () => {
    expect(await promtool('check', 'rules', RULES)).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('each rule says how long it must hold, how severe it is, and what to do', () => {
    expect(rules.length).toBeGreaterThan(10);
    for (const rule of rules) {
      expect(rule.alert, rule.expr).toMatch(/^Smsgw[A-Z]\w+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      expect(Object.keys(rule.annotations ?? {}).sort(), rule.alert).toEqual(['description', 'summary']);
    }
    expect(new Set(rules.map((rule) => rule.alert)).size).toBe(rules.length);
  });

  it("the rules' own tests pass: what fires an alert and what must not", async () => {
    expect(await promtool('test', 'rules', 'deploy/prometheus/smsgw.rules.test.yml')).toContain('SUCCESS');
  });

  it('the config is valid, with the rule file it names', async () => {
    const output = await promtool('check', 'config', 'deploy/prometheus/prometheus.yml');
    expect(output).toContain('is valid prometheus config file');
    expect(output).toContain('SUCCESS: 1 rule files found');
  });
});

describe('Grafana dashboards', () => {
  it('read Prometheus through their datasource variable, each panel and query, with a uid each', () => {
    expect(dashboards.map(({ file }) => file).sort()).toEqual(['smsgw-fleet.json', 'smsgw-processes.json']);
    expect(new Set(dashboards.map(({ dashboard }) => dashboard.uid)).size).toBe(dashboards.length);
    for (const { file, dashboard } of dashboards) {
      expect(dashboard.templating.list, file).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
      for (const panel of panelsOf(dashboard.panels).filter((p) => p.type !== 'row')) {
        const where = `${file}: ${panel.title}`;
        expect(panel.datasource, where).toEqual(DATASOURCE);
        expect(panel.targets?.length, where).toBeGreaterThan(0);
        for (const target of panel.targets ?? []) expect(target.datasource, where).toEqual(DATASOURCE);
      }
    }
  });
});

describe('the metrics the rules and dashboards read', () => {
  let metricsPort = 0;
  const arrivals: string[] = [];
  const e2e = e2eForAll('monitoring', async (e2e) => {
    const { user, key } = await e2e.user('monitoring');
    const { token } = await createDevice(e2e.db, { userId: user.id, name: 'sim' });
    const hook = await e2e.listen((req, res) => {
      req.resume().on('end', () => {
        arrivals.push(String(req.headers['webhook-id']));
        res.writeHead(204).end();
      });
    });
    await e2e.db.webhook.create({
      data: { id: newId(), userId: user.id, url: hook, events: ['message.sent', 'message.delivered'], secret: generateWebhookSecret() },
    });
    metricsPort = await freePort();
    const cluster = await e2e.startCluster({
      dispatchers: 1,
      deviceTokens: [token],
      env: { METRICS_PORT: String(metricsPort), WEBHOOK_ALLOW_PRIVATE: 'true' },
      simEnv: { SIM_SEND_MS: '2', SIM_DELIVER_MS: '20', SIM_POLL_SECONDS: '2' },
    });
    const client = new SmsgwClient(cluster.baseUrl, key);
    const [id] = (await client.send({ recipients: ['+15550100001'], body: 'watched' })).message_ids;
    await vi.waitFor(async () => expect((await client.getMessage(id!)).status).toBe('delivered'), { timeout: 30_000, interval: 100 });
    await vi.waitFor(() => expect(arrivals).toHaveLength(2), { timeout: 30_000, interval: 100 });
  });

  it('are all served by a live API and dispatcher, with the labels the expressions name', async () => {
    const scrape = async (url: string) => {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      return res.text();
    };
    const api = await scrape(`${e2e().cluster.baseUrl}/metrics`);
    const dispatcher = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    // The run left what the rules and panels count: a message through a device, and its webhook events.
    expect(dispatcher).toMatch(/^smsgw_device_message_transitions_total\{device_id="[^"]+",state="delivered"\} 1$/m);
    expect(dispatcher).toMatch(/^smsgw_webhook_attempts_total\{outcome="succeeded"\} 2$/m);
    expect(api).toMatch(/^smsgw_store_up\{store="postgres"\} 1$/m);

    // Each process is a target of its own; a name only needs to be served by one of them.
    const series = scrapedSeries(exposedSeries(`${api}\n${dispatcher}`));
    expect(expressions.length).toBeGreaterThan(30);
    const problems = expressions.flatMap(({ where, expr }) => missingFrom(expr, series).map((problem) => `${where}: ${problem}`));
    expect(problems).toEqual([]);
  });
});

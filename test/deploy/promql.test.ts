import { describe, expect, it } from 'vitest';
import { exposedSeries, missingFrom, scrapedSeries, selectors } from '../support/promql.ts';

/** The PromQL reading that test/deploy/monitoring.int.test.ts checks the rules and dashboards with. */
const names = (expr: string) => [...selectors(expr).metrics.keys()].sort();

describe('selectors', () => {
  it('finds the metrics, not the functions, aggregations, keywords, numbers, durations or Grafana variables', () => {
    expect(names('sum by (state) (rate(smsgw_message_transitions_total{state=~"sent|failed"}[$__rate_interval]))')).toEqual([
      'smsgw_message_transitions_total',
    ]);
    expect(names('histogram_quantile(0.95, sum by (le, route) (rate(http_seconds_bucket{route!~".*/events"}[5m] offset 1h)))')).toEqual([
      'http_seconds_bucket',
    ]);
    expect(names('max(a{x="1"}) + max(b) == 0 and max(c) > 0 unless on (job) d or absent(up{job="x"} == 1) > bool 1e3')).toEqual(['a', 'b', 'c', 'd', 'up']);
    expect(names('topk(10, sum without (instance) (increase(x_total[1h])) > 0) / scalar(y) * Inf')).toEqual(['x_total', 'y']);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable, written as Grafana reads it.
    expect(names('rate(x[${interval}]) + y{a="$var"}')).toEqual(['x', 'y']);
  });

  it('takes the label names of matchers, and those of by, without, on, ignoring and group_left as grouping', () => {
    const { metrics, grouping } = selectors('sum(a{state="x,y", reason!~"a=b"}) by (queue) / on (job) group_left (le) b{}');
    expect([...metrics.get('a')!]).toEqual(['state', 'reason']);
    expect([...metrics.get('b')!]).toEqual([]);
    expect([...grouping]).toEqual(['queue', 'job', 'le']);
  });
});

describe('missingFrom', () => {
  const series = scrapedSeries(
    exposedSeries(
      [
        '# HELP smsgw_devices Enabled devices.',
        '# TYPE smsgw_devices gauge',
        'smsgw_devices{health="online"} 2',
        'jobs_total{job="message.dispatch",outcome="done"} 3',
        'lat_bucket{le="+Inf",route="/a\\"b"} 1',
        'plain 4',
      ].join('\n'),
    ),
  );

  it('accepts what a scrape holds: target labels, exported_job, histogram buckets and up', () => {
    expect(missingFrom('max by (health) (smsgw_devices{health="online"})', series)).toEqual([]);
    expect(missingFrom('sum by (exported_job, instance) (rate(jobs_total{outcome="error"}[5m]))', series)).toEqual([]);
    expect(missingFrom('histogram_quantile(0.9, sum by (le) (rate(lat_bucket{route!=""}[5m])))', series)).toEqual([]);
    expect(missingFrom('up{job="smsgw-api"} == 0 or plain', series)).toEqual([]);
  });

  it('names a metric that is not served, a matcher label it lacks and a grouping label none has', () => {
    expect(missingFrom('max(smsgw_device{health="online"})', series)).toEqual(['metric smsgw_device']);
    expect(missingFrom('max(smsgw_devices{status="online"})', series)).toEqual(['label status of smsgw_devices']);
    expect(missingFrom('sum by (job_name) (jobs_total)', series)).toEqual(['label job_name (by/on) of jobs_total']);
    expect(missingFrom('lat_sum', series)).toEqual(['metric lat_sum']);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { exportedSeries, type PromqlNames, promqlNames, readRules } from './helpers/opsArtifacts.js';

/**
 * The alert rules and the Grafana dashboard in ops/ (docs/guides/operations.md, "Alerts and dashboard") only name series Patron
 * exports, with labels those series carry: a renamed metric or label fails here, not silently on an on-call
 * engineer's screen. promtool checks the rules' syntax and behaviour in CI (.ci/run); this file checks their
 * vocabulary, and the dashboard's queries' syntax when promtool is installed.
 */
const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const RULES = read('ops/prometheus/patron.rules.yml');
const RULE_TESTS = read('ops/prometheus/patron.rules.test.yml');

const target = z.object({ expr: z.string(), datasource: z.object({ uid: z.string() }) });
interface Panel {
  readonly title: string;
  readonly targets: readonly z.infer<typeof target>[];
  readonly panels: readonly Panel[];
}
const panel: z.ZodType<Panel> = z.lazy(() =>
  z.object({ title: z.string(), targets: z.array(target).default([]), panels: z.array(panel).default([]) }),
);
const dashboardSchema = z.object({
  uid: z.string(),
  panels: z.array(panel),
  templating: z.object({ list: z.array(z.object({ name: z.string(), type: z.string() })) }),
});
const dashboard = dashboardSchema.parse(JSON.parse(read('ops/grafana/patron-dashboard.json')));
const allPanels = (panels: readonly Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels)]);
const dashboardTargets = allPanels(dashboard.panels).flatMap((p) => p.targets.map((t) => ({ panel: p.title, ...t })));

/** Every name and label of `names` is one of `known`; the grouping labels are those of the series it selects. */
function assertKnown(where: string, names: PromqlNames, known: ReadonlyMap<string, ReadonlySet<string>>): void {
  const selected = new Set<string>();
  for (const { metric, labels } of names.selectors) {
    const metricLabels = known.get(metric);
    assert.ok(metricLabels !== undefined, `${where}: ${metric} is not a series Patron exports`);
    for (const label of labels) assert.ok(metricLabels.has(label), `${where}: ${metric} has no label ${label}`);
    for (const label of metricLabels) selected.add(label);
  }
  for (const label of names.grouping) {
    assert.ok(selected.has(label), `${where}: no series it selects has the label ${label} it groups by`);
  }
}

describe('the PromQL reader', () => {
  test('finds the metrics, the matchers and the grouping labels, and not functions, strings or numbers', () => {
    const names = promqlNames(
      'sum by (job, chian) (rate(patron_nope_total{outcome="denied", rule=~"a|b"}[$__rate_interval])) / 1e18 ' +
        'and on (job) group_left () changes(process_start_time_seconds[1h]) > 0',
    );
    assert.deepEqual(names.selectors, [
      { metric: 'patron_nope_total', labels: ['outcome', 'rule'] },
      { metric: 'process_start_time_seconds', labels: [] },
    ]);
    assert.deepEqual(names.grouping, ['job', 'chian', 'job']);
    const known = exportedSeries();
    assert.throws(() => assertKnown('x', names, known), /patron_nope_total is not a series Patron exports/);
    assert.throws(
      () => assertKnown('x', promqlNames('sum by (chian) (patron_runway_seconds)'), known),
      /groups by|label chian/,
    );
    assert.throws(() => assertKnown('x', promqlNames('patron_runway_seconds{chian="1"}'), known), /no label chian/);
  });
});

describe('ops/prometheus/patron.rules.yml', () => {
  const rules = readRules(RULES);
  const alerts = rules.filter((r) => r.kind === 'alert');

  test('uses only series and labels Patron exports, and its own recorded series', () => {
    const known = new Map(exportedSeries());
    // A recorded series carries the labels its expression groups by.
    for (const r of rules.filter((r) => r.kind === 'record')) {
      assertKnown(`record ${r.name}`, promqlNames(r.expr), known);
      known.set(r.name, new Set(promqlNames(r.expr).grouping));
    }
    for (const a of alerts) assertKnown(`alert ${a.name}`, promqlNames(a.expr), known);
    const used = new Set(rules.flatMap((r) => promqlNames(r.expr).selectors.map((s) => s.metric)));
    for (const name of ['up', 'patron_solvency_signing', 'patron_runway_seconds', 'patron_settlement_lag_blocks']) {
      assert.ok(used.has(name), name);
    }
    assert.ok(alerts.length >= 15, `${alerts.length} alerts`);
  });

  test('each alert has a severity, a summary, a description and a runbook hint', () => {
    for (const a of alerts) {
      assert.match(a.body, /^\s+severity: (critical|warning)$/m, a.name);
      for (const key of ['summary', 'description', 'runbook'])
        assert.match(a.body, new RegExp(`^\\s+${key}: \\S`, 'm'));
    }
  });

  test('each alert has a unit test where it fires and one where it stays silent', () => {
    for (const a of alerts) {
      const at = `alertname: ${a.name}\\n\\s+exp_alerts:`;
      assert.match(RULE_TESTS, new RegExp(`${at} \\[\\]`), `${a.name} never shown silent`);
      assert.match(RULE_TESTS, new RegExp(`${at}\\n\\s+- exp_labels:`), `${a.name} never shown firing`);
    }
  });
});

describe('ops/grafana/patron-dashboard.json', () => {
  test('uses only series and labels Patron exports, and shows every patron_ metric', () => {
    const known = exportedSeries();
    const used = new Set<string>();
    for (const t of dashboardTargets) {
      const names = promqlNames(t.expr);
      assertKnown(`panel "${t.panel}"`, names, known);
      for (const s of names.selectors) used.add(s.metric.replace(/_(bucket|sum|count)$/, ''));
    }
    const patron = [...known.keys()].filter((n) => n.startsWith('patron_') && !/_(sum|count)$/.test(n));
    for (const name of patron) assert.ok(used.has(name.replace(/_bucket$/, '')), `${name} is on no panel`);
  });

  test('takes its data source, job, instance and chain from variables', () => {
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v.type]));
    assert.equal(variables.get('DS_PROMETHEUS'), 'datasource');
    for (const name of ['job', 'instance', 'chain']) assert.equal(variables.get(name), 'query', name);
    const known = exportedSeries();
    assert.ok(dashboardTargets.length >= 20, `${dashboardTargets.length} queries`);
    for (const t of dashboardTargets) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, meant literally.
      assert.equal(t.datasource.uid, '${DS_PROMETHEUS}', t.panel);
      for (const { metric } of promqlNames(t.expr).selectors) {
        assert.match(t.expr, new RegExp(`${metric}\\{[^}]*instance=~"\\$instance"`), `${t.panel}: ${metric}`);
        if (known.get(metric)?.has('chain')) {
          assert.match(t.expr, new RegExp(`${metric}\\{[^}]*chain=~"\\$chain"`), `${t.panel}: ${metric} by chain`);
        }
      }
    }
  });

  const promtool = spawnSync('promtool', ['--version']).status === 0;
  test('its queries parse (promtool check rules)', { skip: promtool ? false : 'promtool is not installed' }, () => {
    // Each query as a recording rule, Grafana's variables replaced as Grafana would.
    const rules = dashboardTargets.map((t, i) => ({
      record: `dashboard:query${i}`,
      expr: t.expr.replaceAll('$__rate_interval', '5m').replace(/\$\w+/g, '.*'),
    }));
    const dir = mkdtempSync(join(tmpdir(), 'patron-dashboard-'));
    try {
      const file = join(dir, 'dashboard.rules.yml');
      // JSON is YAML.
      writeFileSync(file, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }));
      const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
      assert.match(run.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

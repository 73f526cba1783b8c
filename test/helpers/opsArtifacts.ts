import { z } from 'zod';
import { createPatronMetrics } from '../../src/metrics/patronMetrics.js';

/**
 * Readers for the operations artefacts in ops/ (test/opsArtifacts.test.ts): the series Patron exports, the names
 * a PromQL expression uses, and the rules of a Prometheus rules file. The rules are read with a few regular
 * expressions rather than a YAML parser, which is no dependency of Patron: the file's shape is fixed (groups of
 * `- record:` / `- alert:` entries with an `expr:` on one line or as a `|` block) and promtool checks the rest.
 */

/** Each series name Patron's registry exports, with the labels it may carry once scraped. */
export function exportedSeries(): Map<string, ReadonlySet<string>> {
  // The registry the app builds (src/metrics/observability.ts), process metrics included.
  const { registry } = createPatronMetrics({ chainIds: [1], processMetrics: true });
  // prom-client keeps each metric's label names on the object; its typings do not list them.
  const shape = z.object({ name: z.string(), type: z.string(), labelNames: z.array(z.string()).default([]) });
  const series = new Map<string, ReadonlySet<string>>();
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type, labelNames } = shape.parse(metric);
    // Prometheus adds the target's labels to every series it scrapes.
    const labels = new Set([...labelNames, 'job', 'instance']);
    if (type === 'histogram') {
      series.set(`${name}_bucket`, new Set([...labels, 'le']));
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else if (type === 'summary') {
      series.set(name, new Set([...labels, 'quantile']));
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else {
      series.set(name, labels);
    }
  }
  // Prometheus's own series for every target.
  series.set('up', new Set(['job', 'instance']));
  return series;
}

export interface PromqlNames {
  /** Each selector: its metric name and the labels it matches on. */
  readonly selectors: readonly { readonly metric: string; readonly labels: readonly string[] }[];
  /** The labels of `by`, `without`, `on`, `ignoring`, `group_left` and `group_right`. */
  readonly grouping: readonly string[];
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring']);
const GROUPING = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/**
 * The metric and label names a PromQL expression uses: enough of the language for alerting and dashboard queries
 * (selectors, aggregations, vector matching, functions), not a parser. Grafana's `$variables` only ever stand in
 * strings and ranges here, which are set aside first.
 */
export function promqlNames(expr: string): PromqlNames {
  const text = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\[[^\]]*\]/g, '');
  const grouping = [...text.matchAll(GROUPING)].flatMap((m) =>
    (m[1] ?? '')
      .split(',')
      .map((l) => l.trim())
      .filter((l) => l !== ''),
  );
  const selectors: { metric: string; labels: string[] }[] = [];
  const rest = text.replace(GROUPING, ' ').replace(/([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g, (_, metric, matchers) => {
    const labels = [...String(matchers).matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1] ?? '');
    selectors.push({ metric: metric ?? '', labels });
    return ' ';
  });
  // What is left: bare metric names, function names (followed by a parenthesis), keywords and numbers.
  for (const m of rest.matchAll(/(?<![\w.$:])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)) {
    const name = m[1] ?? '';
    if (!KEYWORDS.has(name)) selectors.push({ metric: name, labels: [] });
  }
  return { selectors, grouping };
}

export interface RuleEntry {
  readonly kind: 'record' | 'alert';
  readonly name: string;
  readonly expr: string;
  /** The entry's own lines (labels and annotations included). */
  readonly body: string;
}

/** The recording and alerting rules of a Prometheus rules file, in order. */
export function readRules(text: string): RuleEntry[] {
  const entries: { kind: 'record' | 'alert'; name: string; lines: string[] }[] = [];
  for (const line of text.split('\n')) {
    const start = /^\s*- (record|alert):\s*(\S+)\s*$/.exec(line);
    if (start !== null)
      entries.push({ kind: start[1] === 'record' ? 'record' : 'alert', name: start[2] ?? '', lines: [] });
    else entries.at(-1)?.lines.push(line);
  }
  return entries.map(({ kind, name, lines }) => ({ kind, name, expr: exprOf(name, lines), body: lines.join('\n') }));
}

function exprOf(rule: string, lines: readonly string[]): string {
  const at = lines.findIndex((l) => /^\s*expr:/.test(l));
  const line = lines[at];
  if (line === undefined) throw new Error(`rule ${rule} has no expr`);
  const value = line.replace(/^\s*expr:\s*/, '');
  if (value !== '|' && value !== '>') return value;
  const indent = line.search(/\S/);
  const block: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (l.trim() !== '' && l.search(/\S/) <= indent) break;
    block.push(l.trim());
  }
  return block.join(' ').trim();
}

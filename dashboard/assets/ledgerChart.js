// @ts-check
/**
 * Spend per day per policy as a stacked bar chart, inline SVG like chart.js's request chart (same classes, axis and
 * ticks; no library). Each policy gets a colour of its own; the numbers are in each bar's tooltip and in the
 * chart's title for screen readers.
 */
const SVG = 'http://www.w3.org/2000/svg';
/** The colours the style sheet gives, in order: .series-0 to .series-7 (style.css). */
const SERIES_CLASSES = 8;

/**
 * @param {string} tag @param {Record<string, string | number>} attrs
 * @returns {SVGElement}
 */
function s(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * The colour class of each series (policy), in the order given. A class, not a colour: the legend's swatches are
 * HTML, and a style attribute set from a string is refused under the dashboard's CSP (style-src 'self').
 * @param {string[]} series
 */
export function seriesClasses(series) {
  return new Map(series.map((k, i) => [k, `series-${i % SERIES_CLASSES}`]));
}

/**
 * @param {{ days: string[], series: string[], names: Map<string, string>, value: (day: string, series: string) => number, unit: string }} data
 *   `value` in the unit shown (ETH); `names` the label of each series.
 */
export function ledgerChart(data) {
  const width = 720;
  const height = 180;
  const pad = { left: 48, right: 8, top: 8, bottom: 22 };
  const n = Math.max(1, data.days.length);
  const totals = data.days.map((d) => data.series.reduce((t, k) => t + data.value(d, k), 0));
  const max = Math.max(Number.EPSILON, ...totals);
  const barW = (width - pad.left - pad.right) / n;
  const y = (/** @type {number} */ v) => pad.top + (height - pad.top - pad.bottom) * (1 - v / max);
  const classes = seriesClasses(data.series);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'chart',
    role: 'img',
    'aria-labelledby': 'ledger-chart-title',
  });
  const t = s('title', { id: 'ledger-chart-title' });
  const sum = totals.reduce((a, b) => a + b, 0);
  t.textContent = `Settled spend per day over ${data.days.length} days: ${sum.toPrecision(3)} ${data.unit} in all`;
  svg.append(t, s('line', { x1: pad.left, x2: width - pad.right, y1: y(0), y2: y(0), class: 'axis' }));
  const top = s('text', { x: pad.left - 4, y: pad.top + 8, 'text-anchor': 'end', class: 'tick' });
  top.textContent = max === Number.EPSILON ? '0' : max.toPrecision(2);
  svg.append(top);
  data.days.forEach((day, i) => {
    const x = pad.left + i * barW + barW * 0.1;
    const g = s('g', { 'data-day': day });
    const tip = s('title', {});
    tip.textContent = `${day}: ${data.series
      .map((k) => `${data.names.get(k) ?? k} ${data.value(day, k).toPrecision(3)} ${data.unit}`)
      .join(', ')}`;
    g.append(tip);
    let acc = 0;
    for (const k of data.series) {
      const v = data.value(day, k);
      if (v <= 0) continue;
      g.append(
        s('rect', {
          x,
          width: barW * 0.8,
          y: y(acc + v),
          height: y(acc) - y(acc + v),
          class: `ledger-bar ${classes.get(k) ?? ''}`,
        }),
      );
      acc += v;
    }
    svg.append(g);
    if (n <= 16 || i % Math.ceil(n / 8) === 0) {
      const label = s('text', { x: x + barW * 0.4, y: height - 6, 'text-anchor': 'middle', class: 'tick' });
      label.textContent = day.slice(5);
      svg.append(label);
    }
  });
  return svg;
}

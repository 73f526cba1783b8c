// @ts-check
/**
 * A stacked bar chart of requests per time bucket and outcome, drawn as inline SVG (no library). The same
 * numbers are given as text for screen readers.
 */
const SVG = 'http://www.w3.org/2000/svg';
export const OUTCOMES = /** @type {const} */ (['sponsored', 'quoted', 'denied', 'error']);

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
 * @param {{ buckets: Array<{start: string, sponsored: number, quoted: number, denied: number, error: number}>, bucketMs: number }} stats
 */
export function requestChart(stats) {
  const width = 720;
  const height = 180;
  const pad = { left: 36, right: 8, top: 8, bottom: 22 };
  const n = Math.max(1, stats.buckets.length);
  const max = Math.max(1, ...stats.buckets.map((b) => b.sponsored + b.quoted + b.denied + b.error));
  const barW = (width - pad.left - pad.right) / n;
  const y = (/** @type {number} */ v) => pad.top + (height - pad.top - pad.bottom) * (1 - v / max);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'chart',
    role: 'img',
    'aria-labelledby': 'chart-title',
  });
  const t = s('title', { id: 'chart-title' });
  const totals = Object.fromEntries(OUTCOMES.map((o) => [o, stats.buckets.reduce((sum, b) => sum + b[o], 0)]));
  t.textContent = `Requests over time: ${OUTCOMES.map((o) => `${totals[o]} ${o}`).join(', ')}`;
  svg.append(t);
  svg.append(s('line', { x1: pad.left, x2: width - pad.right, y1: y(0), y2: y(0), class: 'axis' }));
  const top = s('text', { x: pad.left - 4, y: pad.top + 8, 'text-anchor': 'end', class: 'tick' });
  top.textContent = String(max);
  const zero = s('text', { x: pad.left - 4, y: y(0), 'text-anchor': 'end', class: 'tick' });
  zero.textContent = '0';
  svg.append(top, zero);
  stats.buckets.forEach((b, i) => {
    let acc = 0;
    const x = pad.left + i * barW + barW * 0.1;
    const g = s('g', {});
    const tip = s('title', {});
    const when = new Date(b.start).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
    tip.textContent = `${when}: ${OUTCOMES.map((o) => `${b[o]} ${o}`).join(', ')}`;
    g.append(tip);
    for (const o of OUTCOMES) {
      if (b[o] === 0) continue;
      g.append(
        s('rect', { x, width: barW * 0.8, y: y(acc + b[o]), height: y(acc) - y(acc + b[o]), class: `bar ${o}` }),
      );
      acc += b[o];
    }
    // A transparent full-height target so the tooltip shows on empty buckets too.
    g.append(
      s('rect', {
        x: pad.left + i * barW,
        width: barW,
        y: pad.top,
        height: height - pad.top - pad.bottom,
        class: 'hit',
      }),
    );
    svg.append(g);
    if (i === 0 || i === n - 1 || i === Math.floor(n / 2)) {
      // The end labels are anchored inwards so they are never cut off at the edges.
      const anchor = i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle';
      const at = i === 0 ? pad.left + i * barW : i === n - 1 ? width - pad.right : x + barW * 0.4;
      const label = s('text', { x: at, y: height - 6, 'text-anchor': anchor, class: 'tick' });
      label.textContent = new Date(b.start).toLocaleString(
        undefined,
        stats.bucketMs >= 86_400_000 / 4
          ? { month: 'short', day: 'numeric', hour: '2-digit' }
          : { hour: '2-digit', minute: '2-digit' },
      );
      svg.append(label);
    }
  });
  return svg;
}

/**
 * report.html's picture of the pairs held over time (a run of several instances: a multi-pair file's pairs): how
 * many were held at once, then a lane per pair with a bar where it held a position (market/round-trips' dust rule:
 * less than the pair's step is flat). Bars are placed in percent of the run, in HTML and CSS, so the names stay
 * readable at any width (a phone's); holds closer together than a thousandth of the run are drawn as one.
 */
export const HELD_STYLE = `.held{margin:8px 0 4px;font-size:12px}.held-row{display:grid;grid-template-columns:minmax(60px,max-content) minmax(0,1fr);gap:0 8px;align-items:center;min-height:16px}
.held-name{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.held-lane{position:relative;height:10px;background:#f4f5f9;border-radius:2px}.held-lane i{position:absolute;top:0;bottom:0;background:#0d47a1;min-width:1px}
.held-count svg{display:block;width:100%;height:36px}.held-axis{display:flex;justify-content:space-between;color:#6b7385}`;

export interface HeldLane {
  /** A pair's symbol or an instance's name: letters, digits and _ . - / only (the config's rules), nothing to escape. */
  label: string;
  spans: readonly (readonly [number, number])[];
}

/** The spans of one lane with those closer than `gap` merged. */
function merged(spans: readonly (readonly [number, number])[], gap: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [from, to] of spans) {
    const last = out[out.length - 1];
    if (last !== undefined && from - last[1] <= gap) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** How many lanes hold at each change, as [time, count] steps from `start` (each lane's spans as given). */
export function heldCounts(lanes: readonly HeldLane[], start: number): [number, number][] {
  const edges: [number, number][] = [];
  for (const l of lanes) for (const [from, to] of l.spans) edges.push([from, 1], [to, -1]);
  edges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const steps: [number, number][] = [[start, 0]];
  let held = 0;
  for (const [time, step] of edges) {
    held += step;
    const last = steps[steps.length - 1] as [number, number];
    if (last[0] === time) last[1] = held;
    else steps.push([time, held]);
  }
  return steps;
}

/** The picture: the count of pairs held over the run, then a lane per pair, then the run's first and last times. */
export function heldPicture(lanes: readonly HeldLane[], start: number, end: number): string {
  const span = Math.max(end - start, 1);
  const x = (t: number) => ((Math.min(Math.max(t, start), end) - start) / span) * 100;
  const counts = heldCounts(lanes, start);
  const most = Math.max(...counts.map(([, n]) => n));
  const y = (n: number) => (most === 0 ? 36 : 36 - (n / most) * 34);
  let path = `M0 36`;
  for (const [t, n] of counts) path += ` H${(x(t) * 10).toFixed(1)} V${y(n).toFixed(1)}`;
  path += ` H1000 V36 Z`;
  const rows = lanes.map((l) => {
    const bars = merged(l.spans, span / 1000)
      .map(([from, to]) => `<i style="left:${x(from).toFixed(3)}%;width:${(x(to) - x(from)).toFixed(3)}%"></i>`)
      .join('');
    return `<div class="held-row" data-pair="${l.label}"><span class="held-name">${l.label}</span><div class="held-lane">${bars}</div></div>`;
  });
  const day = (t: number) => new Date(t).toISOString().slice(0, 16).replace('T', ' ');
  return `<div class="held">
<div class="held-row held-count"><span class="held-name">held: ${most} at most</span><svg viewBox="0 0 1000 36" preserveAspectRatio="none" role="img" aria-label="pairs held at once, at most ${most}"><path d="${path}" fill="#90caf9" stroke="#0d47a1" stroke-width="1" vector-effect="non-scaling-stroke"/></svg></div>
${rows.join('\n')}
<div class="held-row"><span></span><div class="held-axis"><span>${day(start)}</span><span>${day(end)} UTC</span></div></div>
</div>`;
}

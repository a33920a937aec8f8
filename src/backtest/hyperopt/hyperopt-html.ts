/**
 * hyperopt.html: one self-contained page (opens from disk, no network) for a hyperopt: the best and its --set
 * flags, how much of it is luck, the convergence (each trial's loss and the best so far against the trial
 * number), each parameter against the loss, the equity of the ten best (the sweep page's chart), a holdout's or
 * walk-forward's tables, and the best trials.
 */
import { chartLibrary } from '../../charts/chart-library.js';
import { LUCK_STYLE, luckSection } from '../luck/luck-html.js';
import { attribution, chartScripts, escapeHtml, htmlList } from '../report-html.js';
import { holdoutTable, walkForwardTable } from '../results-table.js';
import { overrideAssignments, overrideText } from '../strategy-configs.js';
import { COLORS, CURVES, SCRIPT, STYLE } from '../sweep-html.js';
import { type HyperoptRecord, type RankedTrial, rankingLine } from './hyperopt-record.js';
import { bestTrialsTable } from './hyperopt-table.js';
import { LOSS_OBJECTIVE } from './loss.js';
import type { Dimension } from './space.js';

export interface HyperoptPage {
  title: string;
  inputs: string[];
  record: HyperoptRecord;
}

interface Dot {
  x: number;
  y: number;
  tip: string;
  best: boolean;
}

/** An inline SVG scatter: dots, an optional step line, axis ticks at both ends and the middle. */
function plot(
  dots: readonly Dot[],
  opts: {
    w: number;
    h: number;
    xLabel: string;
    yLabel: string;
    line?: [number, number][];
    xTicks?: [number, string][];
  },
): string {
  const { w: W, h: H } = opts;
  const m = { l: 58, r: 12, t: 10, b: 38 };
  const xs = [...dots.map((d) => d.x), ...(opts.line ?? []).map((p) => p[0])];
  const ys = [...dots.map((d) => d.y), ...(opts.line ?? []).map((p) => p[1])];
  if (xs.length === 0) return '<p class="note">No ranked trial to draw.</p>';
  const span = (v: number[]) => {
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    const pad = (hi - lo || Math.abs(hi) || 1) * 0.05;
    return [lo - pad, hi + pad] as const;
  };
  const [x0, x1] = span(xs);
  const [y0, y1] = span(ys);
  const sx = (v: number) => m.l + ((v - x0) / (x1 - x0)) * (W - m.l - m.r);
  const sy = (v: number) => H - m.b - ((v - y0) / (y1 - y0)) * (H - m.t - m.b);
  const fmt = (v: number) => String(Number(v.toPrecision(3)));
  const xTicks = opts.xTicks ?? [x0, (x0 + x1) / 2, x1].map((v) => [v, fmt(v)] as [number, string]);
  const ticks =
    xTicks
      .map(
        ([v, t]) =>
          `<line x1="${sx(v).toFixed(1)}" y1="${H - m.b}" x2="${sx(v).toFixed(1)}" y2="${H - m.b + 4}" stroke="#6b7385"/><text x="${sx(v).toFixed(1)}" y="${H - m.b + 15}" text-anchor="middle">${escapeHtml(t)}</text>`,
      )
      .join('') +
    [y0, (y0 + y1) / 2, y1]
      .map(
        (v) =>
          `<line x1="${m.l - 4}" y1="${sy(v).toFixed(1)}" x2="${m.l}" y2="${sy(v).toFixed(1)}" stroke="#6b7385"/><text x="${m.l - 6}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`,
      )
      .join('');
  const line =
    opts.line && opts.line.length > 0
      ? `<polyline fill="none" stroke="#2962ff" stroke-width="2" points="${opts.line.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"/>`
      : '';
  const points = dots
    .map(
      (d) =>
        `<circle cx="${sx(d.x).toFixed(1)}" cy="${sy(d.y).toFixed(1)}" r="${d.best ? 5 : 3}" fill="${d.best ? '#2962ff' : 'rgba(126,87,194,0.55)'}"${d.best ? ' stroke="#1d2330"' : ''}><title>${escapeHtml(d.tip)}</title></circle>`,
    )
    .join('');
  return `<svg class="plot" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(`${opts.yLabel} against ${opts.xLabel}`)}">
<rect x="${m.l}" y="${m.t}" width="${W - m.l - m.r}" height="${H - m.t - m.b}" fill="#fafbfd" stroke="#e3e6ee"/>
${ticks}${line}${points}
<text x="${(m.l + W - m.r) / 2}" y="${H - 4}" text-anchor="middle">${escapeHtml(opts.xLabel)}</text>
<text transform="translate(12 ${(m.t + H - m.b) / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(opts.yLabel)}</text>
</svg>`;
}

const scored = (trials: readonly RankedTrial[]) =>
  trials.filter((t): t is RankedTrial & { loss: number } => t.rank !== null && t.loss !== null);

/** Each ranked trial's loss, and the best so far as a step line, against the trial number. */
function convergence(trials: readonly RankedTrial[], loss: string): string {
  const dots = scored(trials).map((t) => ({
    x: t.trial + 1,
    y: t.loss,
    tip: `trial ${t.trial + 1}: loss ${t.loss}; ${overrideAssignments(t.values).join(' ')}`,
    best: t.rank === 1,
  }));
  const line: [number, number][] = [];
  let best = Infinity;
  for (const d of [...dots].sort((a, b) => a.x - b.x)) {
    if (d.y < best) {
      if (line.length > 0) line.push([d.x, best]);
      best = d.y;
      line.push([d.x, best]);
    }
  }
  const last = Math.max(0, ...trials.map((t) => t.trial + 1));
  if (line.length > 0) line.push([last, best]);
  return plot(dots, { w: 640, h: 280, xLabel: 'trial', yLabel: `${loss} loss`, line });
}

/** One small scatter per dimension: the value tried against the loss. */
function parameters(dimensions: readonly Dimension[], trials: readonly RankedTrial[]): string {
  return dimensions
    .map((d) => {
      const choice = d.kind === 'choice' ? d.values.map((v) => JSON.stringify(v)) : undefined;
      const at = (v: unknown) => (choice ? choice.indexOf(JSON.stringify(v)) : Number(v));
      const dots = scored(trials).map((t) => ({
        x: at(t.values[d.key]),
        y: t.loss,
        tip: `trial ${t.trial + 1}: ${d.key}=${overrideText(t.values[d.key])}, loss ${t.loss}`,
        best: t.rank === 1,
      }));
      const xTicks = d.kind === 'choice' ? d.values.map((v, i) => [i, overrideText(v)] as [number, string]) : undefined;
      return `<div>${plot(dots, { w: 320, h: 220, xLabel: `${d.key}${d.kind === 'log' ? ' (log scale drawn linear)' : ''}`, yLabel: 'loss', ...(xTicks ? { xTicks } : {}) })}</div>`;
    })
    .join('');
}

function bestTable(r: HyperoptRecord): string {
  const keys = r.hyperopt.space.dimensions.map((d) => d.key);
  return `<pre class="table">${escapeHtml(bestTrialsTable(r.trials, keys, 'loss', 20))}</pre>`;
}

export async function hyperoptHtml(page: HyperoptPage): Promise<string> {
  const r = page.record;
  const lib = await chartLibrary();
  const keys = r.hyperopt.space.dimensions.map((d) => d.key);
  const curves = r.trials
    .filter((t) => t.rank !== null)
    .slice(0, CURVES)
    .map((t, i) => ({
      rank: t.rank,
      label: overrideAssignments(t.values).join(' '),
      color: COLORS[i % COLORS.length] as string,
      equity: t.equity,
    }));
  const legend = curves
    .map((c) => `<span><i style="background:${c.color}"></i>#${c.rank} ${escapeHtml(c.label)}</span>`)
    .join('');
  const best = r.trials.find((t) => t.rank === 1);
  const ranking = { rankBy: LOSS_OBJECTIVE[r.hyperopt.loss], minTrades: r.hyperopt.minTrades };
  const refused = r.trials.filter((t) => t.status === 'refused').length;
  const failed = r.trials.filter((t) => t.status === 'failed').length;
  const bestBox = best
    ? `<p><strong>Best: trial ${best.trial + 1}, loss ${best.loss ?? 'n/a'}</strong>: ${escapeHtml(overrideAssignments(best.values).join(' '))}</p>
<p>${r.sets === null ? `<span class="warn">No --set flags: the deflated Sharpe ratio is under --min-dsr.</span>` : `Run it alone with <code>${escapeHtml(r.sets.join(' '))}</code> (or the strategy file best.json).`}</p>`
    : '<p class="warn">No trial could be ranked.</p>';
  const validation = r.holdout
    ? `<h2>Holdout: the ten best on the held-out part</h2><pre class="table">${escapeHtml(holdoutTable(r.holdout, keys, ranking))}</pre>`
    : r.walkForward
      ? `<h2>Walk-forward: a search in each train part, its best on the test part</h2><pre class="table">${escapeHtml(walkForwardTable(r.walkForward, keys, ranking))}</pre><div id="oos"></div>`
      : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>${STYLE}${LUCK_STYLE}svg.plot{font-size:11px;fill:#1d2330;max-width:100%;height:auto}.params{display:flex;flex-wrap:wrap;gap:8px 20px}code{overflow-wrap:anywhere}</style>
</head>
<body>
<h1>${escapeHtml(page.title)}</h1>
${htmlList(page.inputs)}
${bestBox}
<p class="note">${r.trials.length} trials: ${r.trials.length - refused - failed} ran to the end, ${failed} failed (an instance ended early), ${refused} refused by the strategy file before running. Ranked ${escapeHtml(rankingLine(r.hyperopt))}.</p>
${luckSection(r.luck)}
<h2>Convergence</h2>
${convergence(r.trials, r.hyperopt.loss)}
<p class="note">Each ranked trial's loss (dots; the best outlined) and the best so far (line), by trial number: a search that keeps finding better trials late has not converged.</p>
<h2>Each parameter against the loss</h2>
<div class="params">${parameters(r.hyperopt.space.dimensions, r.trials)}</div>
<p class="note">A narrow valley of good losses around the best is a fragile best: a small change of the value loses it.</p>
<h2>Equity of the ${curves.length} best</h2>
<div class="legend">${legend}</div>
<div id="chart"></div>
<p class="note">Equity sampled every ${r.settings.sampleMs / 60_000} minutes of the recording, and at its end. ${attribution(lib)}</p>
${validation}
<h2>The best trials</h2>
${bestTable(r)}
${chartScripts(lib, 'sweep-data', { curves, oos: r.walkForward?.stitched.equity }, SCRIPT)}`;
}

/**
 * sweep.html: one self-contained page (opens from disk, no network) for a parameter sweep: a heatmap of the
 * total return over the first two keys (one row for a single key; with more keys, each cell shows the best
 * combination with those two values), the equity curves of the best combinations on one chart, and the
 * ranking. The charting library (charts/chart-library.ts) is inlined as in the report (report-html.ts).
 */
import { chartLibrary } from '../charts/chart-library.js';
import { attribution, CHART_OPTIONS_JS, chartScripts, escapeHtml, gapsSection, htmlList } from './report-html.js';
import { overrideAssignments, overrideText } from './strategy-configs.js';
import { efficiencyText, holdoutTable, rankingRows, walkForwardTable } from './results-table.js';
import { type HoldoutRecord, objectiveNumber, type WalkForwardRecord } from './validation-runs.js';
import { type Ranking, rankingText, type SweepAxis, type SweepResult } from './sweep.js';
import type { LuckRecord } from './luck/luck.js';
import { LUCK_STYLE, luckSection } from './luck/luck-html.js';

/** How many of the best combinations get their equity curve drawn. */
export const CURVES = 10;

export interface SweepPage {
  title: string;
  /** One line each: configs, data, settings. */
  inputs: string[];
  axes: readonly SweepAxis[];
  /** The equity sampling interval of the runs. */
  sampleMs: number;
  ranking: Ranking;
  holdout?: HoldoutRecord;
  walkForward?: WalkForwardRecord;
  /** Ranked, best first. */
  results: readonly SweepResult[];
  luck?: LuckRecord | null;
}

/** One colour per curve drawn (CURVES of them). */
export const COLORS = [
  '#2962ff',
  '#ff9800',
  '#00897b',
  '#c2185b',
  '#6d4c41',
  '#7e57c2',
  '#43a047',
  '#f4511e',
  '#00acc1',
  '#9e9d24',
];

function label(result: SweepResult, axes: readonly SweepAxis[]): string {
  return overrideAssignments(
    result.overrides,
    axes.map((a) => a.key),
  ).join(' ');
}

/** Green for a gain, red for a loss, stronger with the size of the return against the largest one shown. */
function shade(returnPct: number, largest: number): string {
  const alpha = largest > 0 ? 0.08 + 0.72 * Math.min(1, Math.abs(returnPct) / largest) : 0.08;
  return returnPct >= 0 ? `rgba(8,153,129,${alpha.toFixed(3)})` : `rgba(242,54,69,${alpha.toFixed(3)})`;
}

function heatmap(axes: readonly SweepAxis[], results: readonly SweepResult[]): string {
  const rows = axes.length > 1 ? axes[0] : undefined;
  const cols = (axes.length > 1 ? axes[1] : axes[0]) as SweepAxis;
  const cellKey = (rowValue: unknown, colValue: unknown) => JSON.stringify([rows ? rowValue : null, colValue]);
  // Results are ranked, so the first one met for a cell is that cell's best.
  const best = new Map<string, SweepResult>();
  for (const r of results) {
    const key = cellKey(rows && r.overrides[rows.key], r.overrides[cols.key]);
    if (!best.has(key)) best.set(key, r);
  }
  const shown = [...best.values()].filter((r) => r.rank !== null);
  const largest = Math.max(0, ...shown.map((r) => Math.abs(Number(r.metrics.totalReturnPct))));
  const cell = (rowValue: unknown, colValue: unknown): string => {
    const r = best.get(cellKey(rowValue, colValue));
    if (r === undefined) return '<td></td>';
    const ret = r.metrics.totalReturnPct;
    if (r.rank === null) {
      const why = r.status === 'failed' ? r.ended.join('; ') : `${r.metrics.roundTrips} closed trades`;
      return `<td class="unranked" title="${escapeHtml(`${r.status}: ${label(r, axes)}; ${why}`)}" data-status="${escapeHtml(r.status)}">${escapeHtml(r.status)}</td>`;
    }
    const tip = `rank ${r.rank}: ${label(r, axes)}; Sharpe ${r.metrics.sharpe ?? 'n/a'}, max DD ${r.metrics.maxDrawdownPct} %, ${r.metrics.fills} fills`;
    const mark = r.rank === 1 ? ' class="best"' : '';
    return `<td${mark} style="background:${shade(Number(ret), largest)}" title="${escapeHtml(tip)}" data-rank="${r.rank}">${escapeHtml(ret)}</td>`;
  };
  const head = `<tr><th>${escapeHtml(rows ? `${rows.key} \\ ${cols.key}` : cols.key)}</th>${cols.values.map((v) => `<th>${escapeHtml(overrideText(v))}</th>`).join('')}</tr>`;
  const body = (rows ? rows.values : [undefined]).map(
    (rv) =>
      `<tr><th>${rows ? escapeHtml(overrideText(rv)) : 'return %'}</th>${cols.values.map((cv) => cell(rv, cv)).join('')}</tr>`,
  );
  const rest = axes.slice(2).map((a) => a.key);
  const note =
    rest.length > 0
      ? `Each cell: the best combination with those values, over ${rest.join(', ')}.`
      : 'Each cell: that combination.';
  return `<div class="scroll"><table class="heat" id="heatmap">${head}${body.join('')}</table></div>
<p class="note">Total return % by ${escapeHtml(rows ? `${rows.key} (rows) and ${cols.key} (columns)` : cols.key)}. ${escapeHtml(note)} The best is outlined; hover a cell for its rank, Sharpe, drawdown and fills.</p>`;
}

function rankingTable(axes: readonly SweepAxis[], results: readonly SweepResult[], ranking: Ranking): string {
  const keys = axes.map((a) => a.key);
  const [head, ...rows] = rankingRows(results, keys, ranking, (r) => r.ended.join('; '));
  const tr = (cells: string[], tag: string) =>
    `<tr>${cells.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('')}</tr>`;
  return `<div class="scroll"><table class="ranking">${tr([...head!, 'ended'], 'th')}${rows.map((r) => tr(r, 'td')).join('')}</table></div>`;
}

interface ScatterPoint {
  x: number;
  y: number;
  label: string;
  best: boolean;
}

/** In-sample (x) against out-of-sample (y) objective, as an inline SVG with the diagonal y = x. */
function scatter(points: readonly ScatterPoint[], what: string): string {
  if (points.length === 0) return '<p class="note">No point to plot: no objective value on both sides.</p>';
  const W = 420;
  const H = 300;
  const m = { l: 56, r: 12, t: 12, b: 40 };
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const lo = Math.min(...xs, ...ys);
  const hi = Math.max(...xs, ...ys);
  const pad = (hi - lo || Math.abs(hi) || 1) * 0.08;
  const [a, b] = [lo - pad, hi + pad];
  const sx = (v: number) => m.l + ((v - a) / (b - a)) * (W - m.l - m.r);
  const sy = (v: number) => H - m.b - ((v - a) / (b - a)) * (H - m.t - m.b);
  const ticks = [a, (a + b) / 2, b].map((v) => Number(v.toPrecision(3)));
  const grid = ticks
    .map(
      (v) =>
        `<line x1="${sx(v)}" y1="${H - m.b}" x2="${sx(v)}" y2="${H - m.b + 4}" stroke="#6b7385"/><text x="${sx(v)}" y="${H - m.b + 16}" text-anchor="middle">${v}</text>` +
        `<line x1="${m.l - 4}" y1="${sy(v)}" x2="${m.l}" y2="${sy(v)}" stroke="#6b7385"/><text x="${m.l - 6}" y="${sy(v) + 4}" text-anchor="end">${v}</text>`,
    )
    .join('');
  const dots = points
    .map(
      (p) =>
        `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="${p.best ? 6 : 4}" fill="${p.best ? '#2962ff' : 'rgba(126,87,194,0.6)'}"${p.best ? ' stroke="#1d2330"' : ''}><title>${escapeHtml(`${p.label}: in ${p.x}, out ${p.y}`)}</title></circle>`,
    )
    .join('');
  return `<svg class="scatter" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(`${what}: in-sample against out-of-sample`)}">
<rect x="${m.l}" y="${m.t}" width="${W - m.l - m.r}" height="${H - m.t - m.b}" fill="#fafbfd" stroke="#e3e6ee"/>
<line x1="${sx(a)}" y1="${sy(a)}" x2="${sx(b)}" y2="${sy(b)}" stroke="#9e9e9e" stroke-dasharray="4 3"/>
${grid}${dots}
<text x="${(m.l + W - m.r) / 2}" y="${H - 6}" text-anchor="middle">${escapeHtml(`${what}, in-sample`)}</text>
<text transform="translate(14 ${(m.t + H - m.b) / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(`${what}, out-of-sample`)}</text>
</svg>`;
}

/** The in-sample against out-of-sample section: the scatter, the table, and the out-of-sample equity. */
function validationSection(page: SweepPage): { html: string; oos: [number, number][] | undefined } {
  const keys = page.axes.map((a) => a.key);
  const what = page.ranking.rankBy;
  const pre = (text: string) => `<pre class="table">${escapeHtml(text)}</pre>`;
  if (page.holdout) {
    const h = page.holdout;
    const points = h.results
      .filter((r) => r.inSample.rank !== null)
      .map((r) => ({
        x: objectiveNumber(r.inSample.metrics, page.ranking),
        y: objectiveNumber(r.outOfSample.metrics, page.ranking),
        label: label({ overrides: r.overrides } as SweepResult, page.axes),
        best: r.inSample.rank === 1,
      }))
      .filter((p): p is ScatterPoint => p.x !== null && p.y !== null);
    const best = h.results.find((r) => r.inSample.rank === 1);
    return {
      html: `<h2>In-sample against out-of-sample (holdout ${h.percent} %)</h2>
<div class="pair"><div>${scatter(points, what)}<p class="note">Each ranked combination; the in-sample best is blue; on the dashed line it did as well on data it was not chosen on.</p></div>
<div class="scroll">${pre(holdoutTable(h, keys, page.ranking))}</div></div>
<h3>Equity of the in-sample best on the held-out part</h3><div id="oos"></div>`,
      oos: best?.outOfSample.equity,
    };
  }
  if (page.walkForward) {
    const w = page.walkForward;
    const points = w.windows
      .map((x, i) => ({
        x: objectiveNumber(x.chosen?.inSample ?? null, page.ranking),
        y: objectiveNumber(x.outOfSample, page.ranking),
        label: `window ${i + 1}`,
        best: false,
      }))
      .filter((p): p is ScatterPoint => p.x !== null && p.y !== null);
    return {
      html: `<h2>Walk-forward: in-sample against out-of-sample</h2>
<p><strong>Stitched out-of-sample return ${escapeHtml(w.stitched.returnPct)} %, max drawdown ${escapeHtml(w.stitched.maxDrawdownPct)} %, walk-forward efficiency ${escapeHtml(efficiencyText(w))}</strong> (out-of-sample return per year over the picks' in-sample return per year).</p>
<div class="pair"><div>${scatter(points, what)}<p class="note">One point per window: the pick's ${escapeHtml(what)} on its train part against its test part.</p></div>
<div class="scroll">${pre(walkForwardTable(w, keys, page.ranking))}</div></div>
<h3>Stitched out-of-sample equity (the test parts, each chained to the previous one's end)</h3><div id="oos"></div>`,
      oos: w.stitched.equity,
    };
  }
  return { html: '', oos: undefined };
}

export const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330}h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 10px;border:1px solid #e3e6ee}td{font-variant-numeric:tabular-nums;text-align:right}
table.heat td{min-width:64px}table.heat td.unranked{color:#b71c1c;background:repeating-linear-gradient(45deg,#fff,#fff 4px,#fdecea 4px,#fdecea 8px)}table.heat td.best{outline:2px solid #1d2330;outline-offset:-2px;font-weight:600}
#chart,#oos{margin-top:8px}pre.table{font-size:12px;margin:0}.pair{display:flex;flex-wrap:wrap;gap:8px 32px;align-items:flex-start}.scroll{overflow-x:auto;max-width:100%}.pair>div{min-width:0;max-width:100%}li{overflow-wrap:anywhere}svg.scatter{font-size:11px;fill:#1d2330;max-width:100%;height:auto}.note{color:#6b7385;font-size:12px}.warn{border:1px solid #ff9800;background:#fff8ec;padding:8px 12px;margin:12px 0}.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:14px;height:3px;margin-right:4px;vertical-align:middle}`;

export const SCRIPT = `(function(){
const d=JSON.parse(document.getElementById('sweep-data').textContent);
const L=LightweightCharts;
const box=document.getElementById('chart');
const chart=L.createChart(box,{width:box.clientWidth||1100,height:420,${CHART_OPTIONS_JS}});
addEventListener('resize',()=>chart.applyOptions({width:box.clientWidth}));
d.curves.slice().reverse().forEach(c=>{
const s=chart.addSeries(L.LineSeries,{color:c.color,lineWidth:c.rank===1?3:1,title:'#'+c.rank,lastValueVisible:false,priceLineVisible:false});
s.setData(c.equity.map(p=>({time:p[0],value:p[1]})));
});
chart.timeScale().fitContent();
const ob=document.getElementById('oos');
if(d.oos&&ob){const c2=L.createChart(ob,{width:ob.clientWidth||1100,height:300,${CHART_OPTIONS_JS}});
addEventListener('resize',()=>c2.applyOptions({width:ob.clientWidth}));
const s2=c2.addSeries(L.LineSeries,{color:'#2962ff',lineWidth:2,title:'out-of-sample'});s2.setData(d.oos.map(p=>({time:p[0],value:p[1]})));c2.timeScale().fitContent();}
})();`;

export async function sweepHtml(page: SweepPage): Promise<string> {
  const lib = await chartLibrary();
  const curves = page.results
    .filter((r) => r.rank !== null)
    .slice(0, CURVES)
    .map((r, i) => ({
      rank: r.rank,
      label: label(r, page.axes),
      color: COLORS[i % COLORS.length] as string,
      equity: r.equity,
    }));
  const validation = validationSection(page);
  const legend = curves
    .map((c) => `<span><i style="background:${c.color}"></i>#${c.rank} ${escapeHtml(c.label)}</span>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>${STYLE}${LUCK_STYLE}</style>
</head>
<body>
<h1>${escapeHtml(page.title)}</h1>
${htmlList(page.inputs)}
${page.results[0] === undefined ? '' : gapsSection(page.results[0].dataGaps, 'sweep.json')}
<h2>Total return</h2>
${heatmap(page.axes, page.results)}
<h2>Equity of the ${curves.length} best</h2>
<div class="legend">${legend}</div>
<div id="chart"></div>
<p class="note">Equity sampled every ${page.sampleMs / 60_000} minutes of the recording, and at its end. ${attribution(lib)}</p>
${page.luck === undefined ? '' : luckSection(page.luck)}
${validation.html}
<h2>Ranking${page.holdout ? ' (in-sample)' : page.walkForward ? ' (the last window’s train part)' : ''}</h2>
<p class="note">Ranked ${escapeHtml(rankingText(page.ranking))}.</p>
${rankingTable(page.axes, page.results, page.ranking)}
${chartScripts(lib, 'sweep-data', { curves, oos: validation.oos }, SCRIPT)}`;
}

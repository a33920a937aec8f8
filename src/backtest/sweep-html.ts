/**
 * sweep.html: one self-contained page (opens from disk, no network) for a parameter sweep: a heatmap of the
 * total return over the first two keys (one row for a single key; with more keys, each cell shows the best
 * combination with those two values), the equity curves of the best combinations on one chart, and the
 * ranking. The charting library is the report's (report-html.ts), inlined the same way.
 */
import { attribution, chartLibrary, chartScripts, escapeHtml, htmlList } from './report-html.js';
import { overrideAssignments, overrideText } from './strategy-configs.js';
import { rankingRows } from './results-table.js';
import { type Ranking, rankingText, type SweepAxis, type SweepResult } from './sweep.js';

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
  /** Ranked, best first. */
  results: readonly SweepResult[];
}

/** One colour per curve drawn (CURVES of them). */
const COLORS = [
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
  return `<table class="heat" id="heatmap">${head}${body.join('')}</table>
<p class="note">Total return % by ${escapeHtml(rows ? `${rows.key} (rows) and ${cols.key} (columns)` : cols.key)}. ${escapeHtml(note)} The best is outlined; hover a cell for its rank, Sharpe, drawdown and fills.</p>`;
}

function rankingTable(axes: readonly SweepAxis[], results: readonly SweepResult[], ranking: Ranking): string {
  const keys = axes.map((a) => a.key);
  const [head, ...rows] = rankingRows(results, keys, ranking, (r) => r.ended.join('; '));
  const tr = (cells: string[], tag: string) =>
    `<tr>${cells.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('')}</tr>`;
  return `<table class="ranking">${tr([...head!, 'ended'], 'th')}${rows.map((r) => tr(r, 'td')).join('')}</table>`;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330}h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 10px;border:1px solid #e3e6ee}td{font-variant-numeric:tabular-nums;text-align:right}
table.heat td{min-width:64px}table.heat td.unranked{color:#b71c1c;background:repeating-linear-gradient(45deg,#fff,#fff 4px,#fdecea 4px,#fdecea 8px)}table.heat td.best{outline:2px solid #1d2330;outline-offset:-2px;font-weight:600}
#chart{margin-top:8px}.note{color:#6b7385;font-size:12px}.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:14px;height:3px;margin-right:4px;vertical-align:middle}`;

const SCRIPT = `(function(){
const d=JSON.parse(document.getElementById('sweep-data').textContent);
const L=LightweightCharts;
const box=document.getElementById('chart');
const chart=L.createChart(box,{width:box.clientWidth||1100,height:420,timeScale:{timeVisible:true,secondsVisible:false}});
addEventListener('resize',()=>chart.applyOptions({width:box.clientWidth}));
d.curves.slice().reverse().forEach(c=>{
const s=chart.addSeries(L.LineSeries,{color:c.color,lineWidth:c.rank===1?3:1,title:'#'+c.rank,lastValueVisible:false,priceLineVisible:false});
s.setData(c.equity.map(p=>({time:p[0],value:p[1]})));
});
chart.timeScale().fitContent();
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
  const legend = curves
    .map((c) => `<span><i style="background:${c.color}"></i>#${c.rank} ${escapeHtml(c.label)}</span>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(page.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(page.title)}</h1>
${htmlList(page.inputs)}
<h2>Total return</h2>
${heatmap(page.axes, page.results)}
<h2>Equity of the ${curves.length} best</h2>
<div class="legend">${legend}</div>
<div id="chart"></div>
<p class="note">Equity sampled every ${page.sampleMs / 60_000} minutes of the recording, and at its end. ${attribution(lib)}</p>
<h2>Ranking</h2>
<p class="note">Ranked ${escapeHtml(rankingText(page.ranking))}.</p>
${rankingTable(page.axes, page.results, page.ranking)}
${chartScripts(lib, 'sweep-data', { curves }, SCRIPT)}`;
}

/**
 * report.html: one self-contained file (opens from disk, no network) with the metrics table, the price with
 * a marker at every fill (exact time and price), the equity curve and its drawdown. The charts are
 * TradingView Lightweight Charts (Apache-2.0): its standalone build is inlined with its licence header, and
 * the attribution is shown under the charts.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ChartPoint } from './chart-series.js';
import type { BacktestRun } from './runner.js';
import type { JobSettings } from './job.js';
import type { BacktestSummary, ScalarMetric } from './summary.js';
import type { RecordingFile } from './tick-data.js';

let library: Promise<{ code: string; version: string }> | undefined;

/** The charting library's standalone production build, read once per process. */
export function chartLibrary(): Promise<{ code: string; version: string }> {
  library ??= (async () => {
    const manifest = createRequire(import.meta.url).resolve('lightweight-charts/package.json');
    const dir = path.dirname(manifest);
    const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
    const code = await readFile(path.join(dir, 'dist', 'lightweight-charts.standalone.production.js'), 'utf8');
    return { code: code.replaceAll('</script', '<\\/script'), version };
  })();
  return library;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that cannot end the script element it sits in. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

type ChartLibrary = Awaited<ReturnType<typeof chartLibrary>>;

/** The credit the library's licence asks for, shown under the charts. */
export function attribution(lib: ChartLibrary): string {
  return `Charts by TradingView Lightweight Charts™ v${escapeHtml(lib.version)}, Copyright (c) TradingView, Inc., Apache License 2.0 (licence header kept in the inlined script).`;
}

/** The end of a chart page: its data as JSON under `id`, the library inlined, the page's script. */
export function chartScripts(lib: ChartLibrary, id: string, data: unknown, script: string): string {
  return `<script type="application/json" id="${id}">${scriptJson(data)}</script>
<script>
${lib.code}
</script>
<script>${script}</script>
</body>
</html>
`;
}

/** Points in whole seconds (the charts' unit), the first of each second, ascending. */
function perSecond(points: readonly ChartPoint[]): { t: number; point: ChartPoint }[] {
  const out: { t: number; point: ChartPoint }[] = [];
  let last = -Infinity;
  for (const point of points) {
    const t = Math.floor(point.time / 1000);
    if (t <= last) continue;
    last = t;
    out.push({ t, point });
  }
  return out;
}

/** Each symbol's price line and fills (time, price, +1 buy / -1 sell, quantity), and the equity line. */
function chartData(run: BacktestRun) {
  const symbols = run.charts.map(({ symbol, points }) => ({
    symbol,
    price: perSecond(points).map(({ t, point }) => [t, point.price]),
    fills: run.fills
      .filter((f) => f.symbol === symbol)
      .map((f) => [Math.floor(f.time / 1000), f.price.toNumber(), f.side === 'BUY' ? 1 : -1, f.baseQty.toFixed()]),
  }));
  // The equity at every charted tick of any symbol (a stable sort: ties keep the symbols' order).
  const all = run.charts.flatMap((c) => c.points).sort((a, b) => a.time - b.time);
  const equity = perSecond(all).map(({ t, point }) => [t, Math.round(point.equity * 100) / 100]);
  return { symbols, equity };
}

const METRIC_LABELS: [ScalarMetric, string][] = [
  ['totalReturnPct', 'Total return %'],
  ['buyAndHoldPct', 'Buy and hold %'],
  ['maxDrawdownPct', 'Max drawdown %'],
  ['sharpe', 'Sharpe (annualised)'],
  ['sortino', 'Sortino (annualised)'],
  ['winRatePct', 'Win rate %'],
  ['profitFactor', 'Profit factor'],
  ['fills', 'Trades (fills)'],
  ['roundTrips', 'Round trips'],
  ['feesQuote', 'Fees (quote)'],
  ['exposurePct', 'Exposure %'],
  ['initialEquity', 'Initial equity'],
  ['finalEquity', 'Final equity'],
  ['pnl', 'PnL'],
];

function metricsTable(summary: BacktestSummary): string {
  const rows = METRIC_LABELS.map(([key, label]) => {
    const value = summary.metrics[key];
    return `<tr><th>${escapeHtml(label)}</th><td>${escapeHtml(value === null ? 'n/a' : String(value))}</td></tr>`;
  });
  return `<table class="metrics">${rows.join('')}</table>`;
}

/** One line per recording: path, size and hash (the report's and the sweep page's). */
export function dataLines(data: readonly RecordingFile[]): string[] {
  return data.map((d) => `data ${d.path} (${d.size} bytes, sha256 ${d.sha256.slice(0, 12)}…)`);
}

/** The strategy module a config ran, with its hash (the report's and the sweep page's). */
export function moduleLine(module: { file: string; sha256: string }): string {
  return `strategy ${module.file} (sha256 ${module.sha256.slice(0, 12)}…)`;
}

/** The matching settings in one line (the report's and the sweep page's). */
export function settingsLine(
  settings: Pick<JobSettings, 'makerFee' | 'takerFee' | 'fillThroughTicks' | 'seed' | 'cancel'>,
): string {
  const { makerFee, takerFee, fillThroughTicks, seed, cancel } = settings;
  const fees = makerFee === takerFee ? `fee ${makerFee}` : `maker fee ${makerFee}, taker fee ${takerFee}`;
  return `${fees}, fill through ${fillThroughTicks} tick(s), seed ${seed}, cancel ${cancel ? 'on' : 'off'}`;
}

export function htmlList(items: readonly string[]): string {
  return `<ul>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>`;
}

function inputsList(summary: BacktestSummary): string {
  const { inputs, period } = summary;
  return htmlList([
    ...inputs.configs.flatMap((c) => [
      `config ${c.file} (${c.strategy} on ${c.symbol}, sha256 ${c.sha256.slice(0, 12)}…)`,
      moduleLine(c.module),
    ]),
    ...dataLines(inputs.data),
    `period ${period.from} to ${period.to}, ${period.ticks} ticks`,
    settingsLine(inputs),
    ...Object.entries(inputs.overrides).map(([k, v]) => `override ${k} = ${JSON.stringify(v)}`),
  ]);
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330}h1{font-size:20px}
table.metrics{border-collapse:collapse;margin:12px 0}table.metrics th,table.metrics td{padding:3px 12px;border-bottom:1px solid #e3e6ee;text-align:left}
table.metrics td{font-variant-numeric:tabular-nums;text-align:right}#chart{margin-top:16px}.note{color:#6b7385;font-size:12px}`;

const SCRIPT = `(function(){
const d=JSON.parse(document.getElementById('report-data').textContent);
const L=LightweightCharts;
const box=document.getElementById('chart');
// An explicit size (not autoSize) so that fitting the whole run and the pane heights apply at once.
const chart=L.createChart(box,{width:box.clientWidth||1100,height:400+280*d.symbols.length,timeScale:{timeVisible:true,secondsVisible:false,minBarSpacing:0.01},layout:{panes:{separatorColor:'#e3e6ee'}}});
addEventListener('resize',()=>chart.applyOptions({width:box.clientWidth}));
const colors=['#2962ff','#ff9800','#00897b','#6d4c41','#c2185b'];
d.symbols.forEach((s,i)=>{
const price=chart.addSeries(L.LineSeries,{color:colors[i%colors.length],lineWidth:1,title:s.symbol},i);
price.setData(s.price.map(p=>({time:p[0],value:p[1]})));
L.createSeriesMarkers(price,s.fills.map(f=>({time:f[0],price:f[1],position:f[2]>0?'atPriceBottom':'atPriceTop',shape:f[2]>0?'arrowUp':'arrowDown',color:f[2]>0?'#089981':'#f23645',text:f[2]>0?'B':'S'})));
});
const n=d.symbols.length;
const equity=chart.addSeries(L.LineSeries,{color:'#7e57c2',lineWidth:2,title:'equity'},n);
equity.setData(d.equity.map(p=>({time:p[0],value:p[1]})));
let peak=-Infinity;
const dd=chart.addSeries(L.AreaSeries,{lineColor:'#f23645',topColor:'rgba(242,54,69,0.05)',bottomColor:'rgba(242,54,69,0.35)',lineWidth:1,title:'drawdown %',invertFilledArea:true},n+1);
dd.setData(d.equity.map(p=>{peak=Math.max(peak,p[1]);return{time:p[0],value:peak>0?(p[1]/peak-1)*100:0};}));
// Panes share the height by stretch factor: the prices 60 % (split evenly), equity 25 %, drawdown 15 %.
const panes=chart.panes();if(panes.length===n+2){panes.forEach((p,i)=>p.setStretchFactor(i<n?0.6/n:i===n?0.25:0.15));}
chart.timeScale().fitContent();
})();`;

export async function reportHtml(run: BacktestRun, summary: BacktestSummary): Promise<string> {
  const lib = await chartLibrary();
  const names = summary.inputs.configs.map((c) => c.name).join(' + ');
  const title = `Backtest ${names} on ${summary.inputs.data.map((d) => d.name).join(', ')}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${inputsList(summary)}
${metricsTable(summary)}
<div id="chart"></div>
<p class="note">Price of ${escapeHtml(run.symbols.join(', '))} (downsampled: the low and high of each stretch of ticks, and every tick with a fill), fills marked at their exact time and price; equity in ${escapeHtml(run.quoteAsset)} and its drawdown below.
${attribution(lib)}</p>
${chartScripts(lib, 'report-data', chartData(run), SCRIPT)}`;
}

/**
 * report.html: one self-contained file (opens from disk, no network): what went wrong first (instances that
 * ended early, refused intents by reason), the metrics, the price with its fills (markers aggregated where
 * they cluster at the zoom shown), the equity curve beside buy and hold and its drawdown, the closed trades,
 * the results by tag and the returns by day, week and month. Figures are rounded for reading (prices and
 * amounts to 8 places at most, percentages to 2); summary.json has them exact. The charts are
 * TradingView Lightweight Charts (Apache-2.0): its standalone build is inlined with its licence header, and
 * the attribution is shown under the charts.
 */
import { chartLibrary } from '../charts/chart-library.js';
import { D } from '../market/decimal.js';
import type { ChartPoint } from './chart-series.js';
import { readingNotes, refusalLines } from './results-table.js';
import type { BacktestRun } from './runner.js';
import type { JobSettings } from './job-settings.js';
import type { BacktestSummary, DataGaps, ScalarMetric } from './summary.js';
import type { RecordingFile } from './tick-data.js';

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

/**
 * The options every report chart shares (a fragment of an object literal in the pages' scripts): both edges of
 * the time axis fixed, which is what makes the library shift the first and last time labels inside the chart
 * rather than cut them at its edge, and no logo over the data (the credit is the text under the charts).
 */
export const CHART_OPTIONS_JS =
  'timeScale:{timeVisible:true,secondsVisible:false,fixLeftEdge:true,fixRightEdge:true},layout:{attributionLogo:false}';

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
  return { symbols, equity, hold: buyAndHoldLine(run) };
}

/** The initial equity put in the unit's symbols in equal parts at their first price, at each equity sample. */
function buyAndHoldLine(run: BacktestRun): [number, number][] {
  const initial = run.initialEquity.toNumber();
  const first = run.priceRange.map((r) => r.first);
  const out: [number, number][] = [];
  for (const s of run.equity) {
    let sum = 0;
    s.prices.forEach((p, k) => (sum += Number.isNaN(p) ? 1 : p / (first[k] as number)));
    const t = Math.floor(s.time / 1000);
    const point: [number, number] = [t, Math.round((initial * sum * 100) / first.length) / 100];
    if (out.length > 0 && (out[out.length - 1] as [number, number])[0] === t) out[out.length - 1] = point;
    else out.push(point);
  }
  return out;
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
  ['roundTrips', 'Round trips (closed trades)'],
  ['expectancy', 'Expectancy (quote per trade)'],
  ['cagrPct', 'CAGR %'],
  ['calmar', 'Calmar'],
  ['feesQuote', 'Fees (quote)'],
  ['exposurePct', 'Exposure %'],
  ['initialEquity', 'Initial equity'],
  ['finalEquity', 'Final equity'],
  ['pnl', 'PnL'],
];

/** A figure for reading: percentages and ratios to 2 places, amounts to 8 at most (trailing zeros dropped). */
export function readable(value: string | number | null, places: number): string {
  if (value === null) return 'n/a';
  if (typeof value === 'number') return String(value);
  const d = new D(value);
  return places === 2 ? d.toFixed(2) : d.toDecimalPlaces(places).toFixed();
}

const PCT_OR_RATIO = /Pct$|^sharpe$|^sortino$|^profitFactor$|^calmar$/;
/** Amounts of the quote asset, shown to its precision (summary.json keeps every digit). */
const MONEY = /^(expectancy|feesQuote|initialEquity|finalEquity|pnl)$/;

function metricsTable(summary: BacktestSummary): string {
  const money = summary.period.quotePrecision;
  const rows = METRIC_LABELS.map(([key, label]) => {
    const value = readable(summary.metrics[key], PCT_OR_RATIO.test(key) ? 2 : MONEY.test(key) ? money : 8);
    return `<tr><th>${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`;
  });
  const ld = summary.longestDrawdown;
  if (ld)
    rows.push(
      `<tr><th>Longest drawdown</th><td>${escapeHtml(`${ld.days} days, ${day(ld.start)} to ${ld.end === null ? 'the end (not recovered)' : day(ld.end)}`)}</td></tr>`,
    );
  const notes = readingNotes(summary)
    .map((n) => `<p class="note">${escapeHtml(n)}</p>`)
    .join('');
  return `<div class="scroll"><table class="metrics">${rows.join('')}</table></div>${notes}`;
}

/** An ISO time as "2023-03-10 14:05" (UTC). */
function day(isoTime: string): string {
  return `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)}`;
}

/** A table with a header row; cells are escaped; `num` marks the columns aligned as numbers. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  num: readonly number[] = [],
): string {
  const th = header.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map(
      (r) => `<tr>${r.map((c, i) => `<td${num.includes(i) ? ' class="n"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<div class="scroll"><table class="grid"><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table></div>`;
}

/** Instances that ended early and refused intents, above everything else: a run that went wrong says so first. */
function problems(summary: BacktestSummary): string {
  const parts: string[] = [];
  if (summary.endedEarly.length > 0)
    parts.push(
      `<div class="alert"><strong>This run failed: an instance ended early.</strong>${htmlList(summary.endedEarly)}</div>`,
    );
  if (summary.refusals.length > 0)
    parts.push(
      `<div class="warn"><strong>Refused intents</strong> (by instance, side and reason; every one is in log.jsonl)${htmlList(refusalLines(summary.refusals))}</div>`,
    );
  return parts.join('\n');
}

const duration = (ms: number): string => {
  const m = Math.round(ms / 60_000);
  return m < 60 ? `${m} min` : m < 2880 ? `${(m / 60).toFixed(1)} h` : `${(m / 1440).toFixed(1)} d`;
};

/** A gap's length: in seconds under two minutes (a missing candle is 75 s), else as durations are. */
const gapLength = (ms: number): string => (ms < 120_000 ? `${ms / 1000} s` : duration(ms));

/** The most gaps a page lists (summary.json, sweep.json list them all). */
const GAPS_SHOWN = 50;

/**
 * Holes in the data (data-gaps.ts): a warning with the longest first when there are any, else one line that says
 * so. `listedIn`: the file that lists them all.
 */
export function gapsSection({ gaps, maxGapMs }: DataGaps, listedIn: string): string {
  const bound = `${maxGapMs / 1000} s (--max-gap)`;
  if (gaps.length === 0) return `<p class="note">No gap in the data longer than ${escapeHtml(bound)}.</p>`;
  const total = gaps.reduce((sum, g) => sum + g.ms, 0);
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const shown = [...gaps]
    .sort((a, b) => b.ms - a.ms || order(a.from, b.from) || order(a.symbol, b.symbol))
    .slice(0, GAPS_SHOWN);
  const more = gaps.length > shown.length ? ` The ${shown.length} longest; ${listedIn} lists all ${gaps.length}.` : '';
  return `<div class="warn"><strong>Gaps in the data: ${gaps.length} longer than ${escapeHtml(bound)}, ${escapeHtml(gapLength(total))} in all.</strong> The data hold no price inside them, and the equity series has no sample inside one past the bound (the change across a gap is one return in Sharpe and Sortino).${more}
${table(
  ['symbol', 'last tick before', 'first tick after', 'length'],
  shown.map((g) => [g.symbol, g.from, g.to, gapLength(g.ms)]),
  [3],
)}</div>`;
}

function tradesSection(summary: BacktestSummary): string {
  const { trades, tradesByTag } = summary;
  if (trades.length === 0) return '<h2>Trades</h2><p>No closed trades.</p>';
  const pairing = `<p class="note">Entries and exits are paired ${escapeHtml(summary.pairing)}.</p>`;
  const money = summary.period.quotePrecision;
  const rows = trades.map((t, i) => [
    String(i + 1),
    t.instance,
    day(t.entryTime),
    readable(t.entryPrice, 8),
    day(t.exitTime),
    readable(t.exitPrice, 8),
    t.quantity,
    readable(t.pnl, money),
    readable(t.pnlPct, 2),
    duration(t.durationMs),
    t.entryTag ?? '',
    t.exitTag ?? '',
  ]);
  const byTag = (groups: typeof tradesByTag.entry) =>
    table(
      ['tag', 'trades', 'win rate %', 'PnL', 'profit factor', 'expectancy'],
      groups.map((g) => [
        g.tag,
        String(g.trades),
        readable(g.winRatePct, 2),
        readable(g.pnl, money),
        readable(g.profitFactor, 2),
        readable(g.expectancy, money),
      ]),
      [1, 2, 3, 4, 5],
    );
  return `<h2>Trades by tag</h2>
<div class="pair"><div><h3>by entry tag</h3>${byTag(tradesByTag.entry)}</div><div><h3>by exit tag (exit reason)</h3>${byTag(tradesByTag.exit)}</div></div>
<h2>Trades (${trades.length})</h2>
${table(['#', 'instance', 'entry', 'entry price', 'exit', 'exit price', 'quantity', 'PnL', 'PnL %', 'held', 'entry tag', 'exit tag'], rows, [0, 3, 5, 6, 7, 8])}
${pairing}`;
}

function returnsSection(summary: BacktestSummary): string {
  const col = (label: string, rows: { period: string; returnPct: string | null }[]) =>
    `<div><h3>${escapeHtml(label)}</h3>${table(
      ['period', 'return %'],
      rows.map((r) => [r.period, readable(r.returnPct, 2)]),
      [1],
    )}</div>`;
  const { day: d, week, month } = summary.returns;
  return `<h2>Returns</h2><div class="pair">${col('by month', month)}${col('by week (from Monday)', week)}${col('by day', d)}</div>`;
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
  settings: Pick<JobSettings, 'makerFee' | 'takerFee' | 'fillThroughTicks' | 'latencyMs' | 'slippageBps' | 'cancel'>,
): string {
  const { makerFee, takerFee, fillThroughTicks, latencyMs, slippageBps, cancel } = settings;
  const fees = makerFee === takerFee ? `fee ${makerFee}` : `maker fee ${makerFee}, taker fee ${takerFee}`;
  const latency = latencyMs === undefined ? 'one data step' : `${latencyMs} ms`;
  return `${fees}, latency ${latency}, slippage ${slippageBps} bps, fill through ${fillThroughTicks} tick(s), cancel ${cancel ? 'on' : 'off'}`;
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

const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330}h1{font-size:20px;overflow-wrap:anywhere}h2{font-size:17px;margin-top:28px}h3{font-size:14px}
li{overflow-wrap:anywhere}
table.metrics,table.grid{border-collapse:collapse;margin:12px 0}table.metrics th,table.metrics td,table.grid th,table.grid td{padding:3px 10px;border-bottom:1px solid #e3e6ee;text-align:left;white-space:nowrap}
table.metrics td,table.grid td.n{font-variant-numeric:tabular-nums;text-align:right}table.grid th{background:#f4f5f9}
.scroll{overflow-x:auto;max-width:100%}.pair>div{min-width:0;max-width:100%}table.metrics td{white-space:normal}.scroll table.grid{margin:4px 0}.pair{display:flex;flex-wrap:wrap;gap:8px 32px;align-items:flex-start}
.alert{border:2px solid #f23645;background:#fff0f1;padding:8px 12px;margin:12px 0}.warn{border:1px solid #ff9800;background:#fff8ec;padding:8px 12px;margin:12px 0}
#chart{margin-top:16px}.note{color:#6b7385;font-size:12px}
@media (max-width:640px){body{margin:10px;font-size:13px}table.metrics th,table.metrics td{padding:3px 6px}}`;

const SCRIPT = `(function(){
const d=JSON.parse(document.getElementById('report-data').textContent);
const L=LightweightCharts;
const box=document.getElementById('chart');
const narrow=()=>box.clientWidth<640;
// An explicit size (not autoSize) so that fitting the whole run and the pane heights apply at once.
const height=()=>(narrow()?260:400)+(narrow()?200:280)*d.symbols.length;
const chart=L.createChart(box,{width:box.clientWidth||1100,height:height(),${CHART_OPTIONS_JS},rightPriceScale:{minimumWidth:64}});
chart.applyOptions({timeScale:{minBarSpacing:0.01},layout:{panes:{separatorColor:'#e3e6ee'}}});
addEventListener('resize',()=>chart.applyOptions({width:box.clientWidth,height:height()}));
const colors=['#2962ff','#ff9800','#00897b','#6d4c41','#c2185b'];
const marked=[];
d.symbols.forEach((s,i)=>{
const price=chart.addSeries(L.LineSeries,{color:colors[i%colors.length],lineWidth:1,title:s.symbol},i);
price.setData(s.price.map(p=>({time:p[0],value:p[1]})));
marked.push({fills:s.fills,markers:L.createSeriesMarkers(price,[])});
});
// Fills closer together than about 12 pixels at the current zoom become one marker per side ("B 5" = five buys).
function mark(){
const range=chart.timeScale().getVisibleRange();const w=box.clientWidth||1100;
const span=range?Math.max(1,range.to-range.from):1;const bucket=Math.max(1,Math.floor(span*12/w));
for(const m of marked){
const groups=new Map();
for(const f of m.fills){const k=(f[2]>0?'b':'s')+Math.floor(f[0]/bucket);const g=groups.get(k);if(g){g.n++;g.sum+=f[1];}else groups.set(k,{t:f[0],side:f[2],n:1,sum:f[1]});}
const list=[...groups.values()].sort((a,b)=>a.t-b.t||a.side-b.side);
m.markers.setMarkers(list.map(g=>({time:g.t,price:g.sum/g.n,position:g.side>0?'atPriceBottom':'atPriceTop',shape:g.side>0?'arrowUp':'arrowDown',color:g.side>0?'#089981':'#f23645',text:(g.side>0?'B':'S')+(g.n>1?' '+g.n:'')})));
}
}
let pending=0;chart.timeScale().subscribeVisibleTimeRangeChange(()=>{clearTimeout(pending);pending=setTimeout(mark,60);});
const n=d.symbols.length;
const hold=chart.addSeries(L.LineSeries,{color:'#9e9e9e',lineWidth:1,lineStyle:2,title:'buy and hold'},n);
hold.setData(d.hold.map(p=>({time:p[0],value:p[1]})));
const equity=chart.addSeries(L.LineSeries,{color:'#7e57c2',lineWidth:2,title:'equity'},n);
equity.setData(d.equity.map(p=>({time:p[0],value:p[1]})));
let peak=-Infinity;
const dd=chart.addSeries(L.AreaSeries,{lineColor:'#f23645',topColor:'rgba(242,54,69,0.05)',bottomColor:'rgba(242,54,69,0.35)',lineWidth:1,title:'drawdown %',invertFilledArea:true},n+1);
dd.setData(d.equity.map(p=>{peak=Math.max(peak,p[1]);return{time:p[0],value:peak>0?(p[1]/peak-1)*100:0};}));
// Panes share the height by stretch factor: the prices 60 % (split evenly), equity 25 %, drawdown 15 %.
const panes=chart.panes();if(panes.length===n+2){panes.forEach((p,i)=>p.setStretchFactor(i<n?0.6/n:i===n?0.25:0.15));}
chart.timeScale().fitContent();
mark();
})();`;

export async function reportHtml(run: BacktestRun, summary: BacktestSummary): Promise<string> {
  const lib = await chartLibrary();
  const names = summary.inputs.configs.map((c) => c.name).join(' + ');
  const title = `Backtest ${names} on ${summary.inputs.data.map((d) => d.name).join(', ')}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${problems(summary)}
${inputsList(summary)}
<h2>Fill model</h2>
${htmlList(summary.fillModel.statements)}
${gapsSection(summary, 'summary.json')}
${metricsTable(summary)}
<div id="chart"></div>
<p class="note">Price of ${escapeHtml(run.symbols.join(', '))} (downsampled: the low and high of each stretch of ticks, and every tick with a fill), fills marked at their time and price (B buy, S sell; fills that would overlap at this zoom are one marker with their count, at their mean price: zoom in to separate them); equity in ${escapeHtml(run.quoteAsset)} beside buy and hold (dashed: the starting equity in the symbols at their first price), and the drawdown below.
${attribution(lib)}</p>
${tradesSection(summary)}
${returnsSection(summary)}
${chartScripts(lib, 'report-data', chartData(run), SCRIPT)}`;
}

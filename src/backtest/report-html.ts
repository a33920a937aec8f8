/**
 * report.html: one self-contained file (opens from disk, no network): what went wrong first (instances that
 * ended early, refused intents by reason), the metrics, the price with its fills (markers aggregated where
 * they cluster at the zoom shown), the equity curve beside buy and hold and its drawdown, the closed trades,
 * the results by tag and the returns by day, week and month. Figures are rounded for reading (prices and
 * amounts to 8 places at most, percentages to 2); summary.json has them exact. The charts are
 * TradingView Lightweight Charts (Apache-2.0): its standalone build is inlined with its licence header, and
 * the attribution is shown under the charts.
 */
import { candleChartScript, chartLibrary } from '../charts/chart-library.js';
import { D } from '../market/decimal.js';
import { instanceGroup } from '../market/instance-names.js';
import { HELD_STYLE, type HeldLane, heldPicture } from './held-picture.js';
import { heldSpans } from './performance-metrics.js';
import { readingNotes, refusalLines } from './results-table.js';
import type { BacktestRun } from './runner.js';
import type { JobSettings } from './job-settings.js';
import { type BacktestSummary, type DataGaps, type ScalarMetric, tradeFills } from './summary.js';
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

/**
 * Each symbol's chart (candles from the run's start at the report's timeframe, its instances' indicators: the page's
 * shape, strategy/indicator-chart.ts) and fills (time ms, price, +1 buy / -1 sell); the equity after the last tick of
 * each candle, of whichever symbol ticked last in it; and buy and hold at each candle: the initial equity in the
 * symbols in equal parts at their first price, valued at the candles' closes.
 */
function chartData(run: BacktestRun) {
  const symbols = run.charts.map(({ symbol, chart }) => ({
    symbol,
    chart,
    fills: run.fills
      .filter((f) => f.symbol === symbol)
      .map((f) => [f.time, f.price.toNumber(), f.side === 'BUY' ? 1 : -1]),
  }));
  const bySlot = new Map<number, { tick: number; equity: number }>();
  for (const { equity } of run.charts)
    for (const [slot, tick, value] of equity) {
      const known = bySlot.get(slot);
      if (known === undefined || tick >= known.tick) bySlot.set(slot, { tick, equity: value });
    }
  const equity = [...bySlot.entries()]
    .sort(([a], [b]) => a - b)
    .map(([slot, e]) => [slot, Math.round(e.equity * 100) / 100]);
  return { symbols, equity, hold: buyAndHoldLine(run) };
}

/** The initial equity put in the unit's symbols in equal parts at their first price, at each candle's close. */
function buyAndHoldLine(run: BacktestRun): [number, number][] {
  const initial = run.initialEquity.toNumber();
  const first = run.priceRange.map((r) => r.first);
  const closes = run.charts.map(({ chart }) => {
    const byTime = new Map<number, number>();
    chart.candles.forEach((c, k) => {
      if (c !== null) byTime.set(chart.start + k * chart.step, c[3]);
    });
    return byTime;
  });
  const times = [...new Set(closes.flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
  const last = first.slice();
  return times.map((t) => {
    closes.forEach((m, k) => (last[k] = m.get(t) ?? (last[k] as number)));
    const sum = last.reduce((s, p, k) => s + p / (first[k] as number), 0);
    return [t, Math.round((initial * sum * 100) / first.length) / 100];
  });
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

/** Each pair's trades, PnL and exposure and their total, when the run traded more than one instance. */
function pairsSection(run: BacktestRun, summary: BacktestSummary): string {
  const { pairs, metrics } = summary;
  if (pairs.length < 2) return '';
  const money = summary.period.quotePrecision;
  const rows = pairs.map((p) => [
    p.instance,
    p.symbol,
    String(p.trades),
    readable(p.winRatePct, 2),
    readable(p.pnl, money),
    readable(p.feesQuote, money),
    readable(p.exposurePct, 2),
  ]);
  const total = pairs.reduce((sum, p) => sum + p.trades, 0);
  rows.push([
    'total',
    `${pairs.length} pairs`,
    String(total),
    readable(metrics.winRatePct, 2),
    readable(pairs.reduce((sum, p) => sum.plus(p.pnl), new D(0)).toFixed(), money),
    readable(metrics.feesQuote, money),
    readable(metrics.exposurePct, 2),
  ]);
  return `<h2>Pairs (${pairs.length})</h2>
${table(['instance', 'symbol', 'closed trades', 'win rate %', 'PnL of closed trades', 'fees', 'exposure %'], rows, [2, 3, 4, 5, 6])}
<p class="note">PnL of closed trades, net of fees; what a pair still held at the end is in the run's final equity. The total's exposure is the share of the time any pair held a position.</p>
<h3>Pairs held over time</h3>
${heldPicture(heldLanes(run, pairs), run.firstTime, run.lastTime)}
<p class="note">A bar where a pair held a position (more than dust); above, how many pairs held one at once (what portfolio.maxOpenTrades bounds, with working buys counted too).</p>`;
}

/** Each pair's holds, labelled by its symbol when the pairs are of one file (else by instance). */
function heldLanes(run: BacktestRun, pairs: BacktestSummary['pairs']): HeldLane[] {
  const spans = heldSpans(tradeFills(run), run.lastTime);
  const oneFile = new Set(pairs.map((p) => instanceGroup(p.instance)?.group)).size === 1;
  return pairs.map((p) => ({
    label: oneFile && instanceGroup(p.instance) !== undefined ? p.symbol : p.instance,
    spans: spans.get(`${p.instance}/${p.symbol}`) ?? [],
  }));
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
      `config ${c.file} (${c.strategy} on ${c.symbols.join(', ')}, sha256 ${c.sha256.slice(0, 12)}…)`,
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
#chart{margin-top:4px}.note{color:#6b7385;font-size:12px}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;margin-top:16px;font-size:12px;color:#6b7385}.legend strong{color:#1d2330}.legend i{display:inline-block;width:14px;height:3px;margin-right:4px;vertical-align:middle}.legend i.dashed{background:repeating-linear-gradient(90deg,#9e9e9e 0 4px,transparent 4px 7px)!important}
@media (max-width:640px){body{margin:10px;font-size:13px}table.metrics th,table.metrics td{padding:3px 6px}}
${HELD_STYLE}`;

// The chart: each symbol's candles and indicators (charts/candle-chart.js, as the page draws them) one under the
// other, then the equity beside buy and hold, then the drawdown, on one time axis; names and colours in the legend
// above it, nothing written over the price scales but their own figures.
const SCRIPT = `(function(){
const d=JSON.parse(document.getElementById('report-data').textContent);
const L=LightweightCharts;const C=CandleChart;
const box=document.getElementById('chart');
const narrow=()=>box.clientWidth<640;
// Each pane's height in pixels (a price, each oscillator under it, the equity, the drawdown): the panes' stretch
// factors, and their sum the chart's height, given at once (not autoSize) so fitting the whole run applies to it.
const sizes=[];for(const s of d.symbols){sizes.push(narrow()?220:340);for(const i of s.chart.indicators)if(i.pane==='own')sizes.push(narrow()?100:110);}
sizes.push(narrow()?180:220,narrow()?100:120);
const height=()=>sizes.reduce((a,b)=>a+b,0);
const chart=L.createChart(box,C.chartOptions({width:box.clientWidth||1100,height:height()}));
addEventListener('resize',()=>chart.applyOptions({width:box.clientWidth,height:height()}));
const legend=document.getElementById('chart-legend');
const item=(name,color,dashed)=>{const s=document.createElement('span');const i=document.createElement('i');i.style.background=color;if(dashed)i.className='dashed';s.append(i,name);s.dataset.line=name;legend.append(s);};
const marked=[];let pane=0;
for(const s of d.symbols){
const h=C.create(chart,pane);h.set(s.chart);pane=h.nextPane;
const head=document.createElement('strong');head.textContent=s.symbol+' ('+s.chart.timeframe+' candles)';legend.append(head);
for(const l of h.legend())item(l.name+(l.overPrice?'':' (pane below)'),l.color);
marked.push({fills:s.fills,data:s.chart,markers:L.createSeriesMarkers(h.candles,[])});
}
const head=document.createElement('strong');head.textContent='account';legend.append(head);
const lineOptions=(color,extra)=>Object.assign({color,lineWidth:1,priceLineVisible:false,lastValueVisible:false,crosshairMarkerVisible:false},extra);
const hold=chart.addSeries(L.LineSeries,lineOptions('#9e9e9e',{lineStyle:2}),pane);item('buy and hold','#9e9e9e',true);
hold.setData(d.hold.map(p=>({time:p[0]/1000,value:p[1]})));
const equity=chart.addSeries(L.LineSeries,lineOptions('#0d47a1',{lineWidth:2}),pane);item('equity','#0d47a1');
equity.setData(d.equity.map(p=>({time:p[0]/1000,value:p[1]})));
let peak=-Infinity;
const dd=chart.addSeries(L.AreaSeries,{lineColor:'#f23645',topColor:'rgba(242,54,69,0.05)',bottomColor:'rgba(242,54,69,0.35)',lineWidth:1,invertFilledArea:true,priceLineVisible:false,lastValueVisible:false},pane+1);item('drawdown % (pane below)','#f23645');
dd.setData(d.equity.map(p=>{peak=Math.max(peak,p[1]);return{time:p[0]/1000,value:peak>0?(p[1]/peak-1)*100:0};}));
chart.panes().forEach((p,i)=>p.setStretchFactor(sizes[i]||1));
// Entries and exits in their candle at their price; those closer together than about 12 pixels at the current zoom
// are one marker per side with their count ("B 5" = five buys), at their mean price.
function mark(){
const w=box.clientWidth||1100;
for(const m of marked){
const range=chart.timeScale().getVisibleLogicalRange();const slots=range?Math.max(1,range.to-range.from):m.data.candles.length;
const bucket=Math.max(1,Math.floor(slots*12/w));const groups=new Map();
for(const f of m.fills){const k=C.slotOf(m.data,f[0]);if(k<0)continue;const key=(f[2]>0?'b':'s')+Math.floor(k/bucket);const g=groups.get(key);if(g){g.n++;g.sum+=f[1];}else groups.set(key,{k,side:f[2],n:1,sum:f[1]});}
const list=[...groups.values()].sort((a,b)=>a.k-b.k||a.side-b.side);
m.markers.setMarkers(list.map(g=>({time:C.slotTime(m.data,g.k),price:g.sum/g.n,position:g.side>0?'atPriceBottom':'atPriceTop',shape:g.side>0?'arrowUp':'arrowDown',color:g.side>0?C.UP:C.DOWN,text:(g.side>0?'B':'S')+(g.n>1?' '+g.n:'')})));
}
}
let pending=0;chart.timeScale().subscribeVisibleLogicalRangeChange(()=>{clearTimeout(pending);pending=setTimeout(mark,60);});
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
${pairsSection(run, summary)}
<div id="chart-legend" class="legend"></div>
<div id="chart"></div>
<p class="note">Candles of ${escapeHtml(run.symbols.join(', '))} (one per bucket of their timeframe: the time axis is linear in time, a hole in the data is an empty stretch) with the strategies' declared indicators (over the price, or an oscillator in a pane of its own, each value where the strategy first read it: after the candle it was computed on closed); entries and exits in their candle at their price (B buy, S sell; those that would overlap at this zoom are one marker with their count, at their mean price: zoom in to separate them); equity in ${escapeHtml(run.quoteAsset)} at the end of each candle beside buy and hold (dashed: the starting equity in the symbols at their first price), and the drawdown below.
${attribution(lib)}</p>
${tradesSection(summary)}
${returnsSection(summary)}
${chartScripts(lib, 'report-data', chartData(run), `${await candleChartScript()}\n${SCRIPT}`)}`;
}

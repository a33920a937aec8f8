/**
 * The charting library every picture of the bot draws with: TradingView Lightweight Charts (Apache-2.0), its
 * standalone build read from node_modules, so the backtest reports (inlined) and the dashboard (served) work
 * offline, with no CDN.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

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

let candleScript: Promise<string> | undefined;

/**
 * The candle chart's browser script (candle-chart.js beside this file: candles, the strategies' declared indicators
 * and their panes on a Lightweight Charts chart), read once per process: the reports inline it, the page serves it.
 */
export function candleChartScript(): Promise<string> {
  candleScript ??= readFile(new URL('./candle-chart.js', import.meta.url), 'utf8');
  return candleScript;
}

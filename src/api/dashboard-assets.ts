/**
 * The dashboard's files, shipped in the package (src/api/dashboard/, copied next to the build by `npm run
 * build`), the charting library from node_modules and the candle chart's script (charts/chart-library.ts, as the
 * backtest reports): the page works offline, with no CDN. Each file is read once.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { candleChartScript, chartLibrary } from '../charts/chart-library.js';

const DIR = fileURLToPath(new URL('./dashboard/', import.meta.url));

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
  'lightweight-charts.js': 'text/javascript; charset=utf-8',
  'candle-chart.js': 'text/javascript; charset=utf-8',
};

export interface Asset {
  body: string;
  type: string;
}

const cache = new Map<string, Promise<Asset>>();

/** The named asset, or undefined for any other name (nothing outside the list is ever read). */
export function dashboardAsset(name: string): Promise<Asset> | undefined {
  // An own property only: `constructor` or `__proto__` are not files (nor Object.prototype's members).
  if (!Object.hasOwn(TYPES, name)) return undefined;
  const type = TYPES[name] as string;
  let asset = cache.get(name);
  if (asset === undefined) {
    asset =
      name === 'lightweight-charts.js'
        ? chartLibrary().then((lib) => ({ body: lib.code, type }))
        : name === 'candle-chart.js'
          ? candleChartScript().then((body) => ({ body, type }))
          : readFile(`${DIR}${name}`, 'utf8').then((body) => ({ body, type }));
    // A failed read is retried next time rather than cached.
    asset.catch(() => cache.delete(name));
    cache.set(name, asset);
  }
  return asset;
}

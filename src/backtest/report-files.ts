/**
 * The output folder of one backtest: summary.json, orders.csv, fills.csv, equity.csv, log.jsonl, report.html, and
 * trades.csv when asked for (--export trades).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { csvCell } from '../market/display.js';
import type { BacktestRun } from './runner.js';
import { reportHtml } from './report-html.js';
import { type BacktestSummary, iso, type TradeRow } from './summary.js';

export function csv(
  header: readonly string[],
  rows: Iterable<readonly (string | number | boolean | undefined)[]>,
): string {
  const lines = [header.join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  return `${lines.join('\n')}\n`;
}

export function ordersCsv(run: BacktestRun): string {
  return csv(
    [
      'time',
      'local_id',
      'instance',
      'symbol',
      'side',
      'type',
      'price',
      'stop_price',
      'limit_price',
      'quantity',
      'quote_amount',
      'status',
      'exchange_id',
      'filled_qty',
      'avg_price',
      'tag',
      'reject_code',
      'reject_reason',
    ],
    run.orders.map((o) => [
      iso(o.createdAt),
      o.localId,
      o.instance,
      o.symbol,
      o.side,
      o.type,
      o.price,
      o.stopPrice,
      o.limitPrice,
      o.quantity,
      o.quoteAmount,
      o.status,
      o.exchangeId,
      o.filledQty,
      o.avgPrice,
      o.tag,
      o.rejectCode,
      o.rejectReason,
    ]),
  );
}

export function fillsCsv(run: BacktestRun): string {
  return csv(
    [
      'time',
      'fill_id',
      'order_id',
      'instance',
      'tag',
      'symbol',
      'side',
      'type',
      'price',
      'quantity',
      'quote_qty',
      'fee',
      'fee_asset',
      'maker',
    ],
    run.fills.map((f) => {
      const order = run.orderOwner.get(f.orderId);
      return [
        iso(f.time),
        f.id,
        f.orderId,
        order?.instance,
        order?.tag,
        f.symbol,
        f.side,
        order?.type,
        f.price.toFixed(),
        f.baseQty.toFixed(),
        f.quoteQty.toFixed(),
        f.fee.toFixed(),
        f.feeAsset.code,
        f.maker,
      ];
    }),
  );
}

/** One row per equity sample: the equity and quote held, then each symbol's last price and base asset held. */
export function equityCsv(run: BacktestRun): string {
  const q = run.quoteAsset;
  return csv(
    [
      'time',
      `equity_${q}`,
      `quote_${q}`,
      ...run.symbols.flatMap((symbol, k) => [`price_${symbol}`, `base_${run.baseAssets[k] ?? ''}`]),
    ],
    run.equity.map((s) => [
      iso(s.time),
      s.equity.toFixed(),
      s.quote.toFixed(),
      ...s.held.flatMap((held, k) => {
        const price = s.prices[k] as number;
        return [Number.isNaN(price) ? undefined : price, held.toFixed()];
      }),
    ]),
  );
}

/** The closed trades (summary.json's `trades`), one row each. */
export function tradesCsv(trades: readonly TradeRow[]): string {
  return csv(
    [
      'instance',
      'symbol',
      'direction',
      'entry_time',
      'exit_time',
      'duration_ms',
      'entry_price',
      'exit_price',
      'quantity',
      'pnl',
      'pnl_pct',
      'entry_tag',
      'exit_tag',
    ],
    trades.map((t) => [
      t.instance,
      t.symbol,
      t.direction,
      t.entryTime,
      t.exitTime,
      t.durationMs,
      t.entryPrice,
      t.exitPrice,
      t.quantity,
      t.pnl,
      t.pnlPct ?? undefined,
      t.entryTag ?? undefined,
      t.exitTag ?? undefined,
    ]),
  );
}

/** What `--export` may add to the output folder. */
export const EXPORTS = ['trades'] as const;
export type ExportKind = (typeof EXPORTS)[number];

/** Writes every file of the report into `dir` (created when missing); returns the paths written. */
export async function writeReport(
  dir: string,
  run: BacktestRun,
  summary: BacktestSummary,
  exports: readonly ExportKind[] = [],
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: [string, string][] = [
    ['summary.json', `${JSON.stringify(summary, null, 2)}\n`],
    ['orders.csv', ordersCsv(run)],
    ['fills.csv', fillsCsv(run)],
    ['equity.csv', equityCsv(run)],
    ['log.jsonl', run.log.jsonl()],
    ...(exports.includes('trades') ? [['trades.csv', tradesCsv(summary.trades)] as [string, string]] : []),
    ['report.html', await reportHtml(run, summary)],
  ];
  const written: string[] = [];
  for (const [name, text] of files) {
    const file = path.join(dir, name);
    await writeFile(file, text);
    written.push(file);
  }
  return written;
}

/** Closed trades on hand-made fills, each expected figure worked out by hand in the comments. */
import { describe, expect, it } from 'vitest';
import { D, type Dec } from '../../src/market/decimal.js';
import { closedTrades, pairingText, statsBy, type TradeFill, tradeStats } from '../../src/market/round-trips.js';

const d = (x: string | number): Dec => new D(x);

function fill(
  book: string,
  side: 'BUY' | 'SELL',
  quantity: string,
  price: string,
  time: number,
  more: Partial<TradeFill> = {},
): TradeFill {
  return { book, side, quantity: d(quantity), price: d(price), fee: d(0), feeIn: 'quote', time, ...more };
}

const figures = (trades: ReturnType<typeof closedTrades>) =>
  trades.map((t) => [t.quantity.toFixed(), t.entryPrice.toFixed(), t.exitPrice.toFixed(), t.pnl.toFixed()]);

describe('closed trades', () => {
  it('pair fills first in first out per book, and count wins, profit factor and expectancy', () => {
    const trades = closedTrades([
      fill('g', 'BUY', '1', '100', 1, { orderId: 'a' }), // lot A: 1 at 100
      fill('g', 'BUY', '1', '110', 2, { orderId: 'b' }), // lot B: 1 at 110
      fill('g', 'SELL', '1.5', '105', 3, { orderId: 'c' }), // A +5, half of B -2.5
      fill('g', 'SELL', '0.5', '120', 4, { orderId: 'd' }), // rest of B +5
    ]);
    expect(figures(trades)).toEqual([
      ['1', '100', '105', '5'],
      ['0.5', '110', '105', '-2.5'],
      ['0.5', '110', '120', '5'],
    ]);
    expect(trades.map((t) => [t.entryTime, t.exitTime, t.durationMs])).toEqual([
      [1, 3, 2],
      [2, 3, 1],
      [2, 4, 2],
    ]);
    const stats = tradeStats(trades);
    expect(stats.trades).toBe(3);
    expect(stats.wins).toBe(2);
    expect(stats.winRate!.toFixed()).toBe(d(2).div(3).toFixed());
    expect(stats.profitFactor!.toFixed()).toBe('4'); // 10 / 2.5
    expect(stats.expectancy!.toFixed()).toBe('2.5'); // 7.5 / 3
    expect(tradeStats([])).toMatchObject({ trades: 0, winRate: undefined, expectancy: undefined });
  });

  it('pair an exit with the entry it names first (a grid slot), FIFO otherwise, and say which', () => {
    // Two grid slots: slot 0 buys at 100 then slot -1 at 99; slot -1 sells at 100, then slot 0 at 101.
    const fills = (named: boolean) => [
      fill('g', 'BUY', '1', '100', 1, { orderId: 'a', tag: 'grid:0:buy' }),
      fill('g', 'BUY', '1', '99', 2, { orderId: 'b', tag: 'grid:-1:buy' }),
      fill('g', 'SELL', '1', '100', 3, {
        orderId: 'c',
        tag: 'grid:0:sell',
        ...(named ? { closes: 'grid:-1:buy' } : {}),
      }),
      fill('g', 'SELL', '1', '101', 4, {
        orderId: 'd',
        tag: 'grid:1:sell',
        ...(named ? { closes: 'grid:0:buy' } : {}),
      }),
    ];
    // First in, first out pairs the sale at 100 with the buy at 100 (no gain) and the one at 101 with 99.
    expect(figures(closedTrades(fills(false)))).toEqual([
      ['1', '100', '100', '0'],
      ['1', '99', '101', '2'],
    ]);
    // Each slot's own round trip: 99 to 100, 100 to 101: both win.
    const named = closedTrades(fills(true));
    expect(figures(named)).toEqual([
      ['1', '99', '100', '1'],
      ['1', '100', '101', '1'],
    ]);
    expect(named.map((t) => [t.entryTag, t.exitTag])).toEqual([
      ['grid:-1:buy', 'grid:0:sell'],
      ['grid:0:buy', 'grid:1:sell'],
    ]);
    // An exit naming an entry with no open lot closes first in, first out.
    expect(figures(closedTrades([...fills(true).slice(0, 2), { ...fills(true)[2]!, closes: 'grid:5:buy' }]))).toEqual([
      ['1', '100', '100', '0'],
    ]);
    expect(pairingText(fills(false))).toMatch(/^first in, first out per instance and pair/);
    expect(pairingText(fills(true))).toMatch(/^by the entry each exit names \(2 of 4 fills named one/);
  });

  it('count the fees of both sides in the PnL, not in the prices', () => {
    // BUY 2 at 100, 0.1 % fee in base: holds 1.998 for 200. SELL 1.998 at 110: 219.78 less 0.21978 quote fee.
    const [t] = closedTrades([
      fill('x', 'BUY', '2', '100', 1, { fee: d('0.002'), feeIn: 'base' }),
      fill('x', 'SELL', '1.998', '110', 2, { fee: d('0.21978'), feeIn: 'quote' }),
    ]);
    expect(t!.quantity.toFixed()).toBe('1.998');
    expect([t!.entryPrice.toFixed(), t!.exitPrice.toFixed()]).toEqual(['100', '110']);
    expect(t!.entryValue.toFixed()).toBe('200');
    expect(t!.exitValue.toFixed()).toBe('219.56022');
    expect(t!.pnl.toFixed()).toBe('19.56022');
    expect(t!.pnlRatio!.toFixed()).toBe('0.0978011');
  });

  it('make one trade of the partial fills of one entry order and one exit order, with their tags', () => {
    const trades = closedTrades([
      fill('m', 'BUY', '0.5', '100', 10, { orderId: 'm-1', tag: 'dip:buy' }),
      fill('m', 'BUY', '0.5', '102', 11, { orderId: 'm-1', tag: 'dip:buy' }), // entry 101
      fill('m', 'SELL', '0.4', '110', 20, { orderId: 'm-2', tag: 'dip:sell' }),
      fill('m', 'SELL', '0.6', '112', 25, { orderId: 'm-2', tag: 'dip:sell' }), // exit 111.2
    ]);
    expect(trades).toHaveLength(1);
    expect(figures(trades)).toEqual([['1', '101', '111.2', '10.2']]);
    expect(trades[0]).toMatchObject({
      entryTime: 10,
      exitTime: 25,
      durationMs: 15,
      entryOrderId: 'm-1',
      exitOrderId: 'm-2',
      entryTag: 'dip:buy',
      exitTag: 'dip:sell',
    });
  });

  it('treat what is left below the pair step as flat: fee dust makes no round trip', () => {
    // BUY 0.0123 at 100 with a 0.1 % base fee holds 0.0122877; the step allows selling 0.01228, 0.0000077 is
    // dust. It joins the next lot (0.0122877 + 0.0000077 = 0.0122954); selling 0.01229 leaves 0.0000054.
    const step = d('0.00001');
    const cycle = (t: number) => [
      fill('b', 'BUY', '0.0123', '100', t, { fee: d('0.0000123'), feeIn: 'base', step }),
      fill('b', 'SELL', t === 0 ? '0.01228' : '0.01229', '101', t + 1, { step }),
    ];
    const fills = [...cycle(0), ...cycle(10)];
    const trades = closedTrades(fills);
    expect(trades.map((t) => t.quantity.toFixed())).toEqual(['0.01228', '0.01229']);
    // The second trade's entry cost: 1.23 for its own 0.0122877 plus the dust's share of the first (1.23 x 77 / 122877).
    const dustValue = d('1.23').mul('0.0000077').div('0.0122877');
    const secondEntry = d('1.23').plus(dustValue).mul('0.01229').div('0.0122954');
    expect(trades[1]!.entryValue.toFixed()).toBe(secondEntry.toFixed());
    expect(tradeStats(trades).trades).toBe(2);
    // Without the step every residue is a position: the dust closes as a round trip of its own.
    const naive = closedTrades(fills.map(({ step: _, ...f }) => f));
    expect(naive.map((t) => t.quantity.toFixed())).toEqual(['0.01228', '0.0000077', '0.0122823']);
  });

  it('open a short lot when selling what was not bought, and keep books apart', () => {
    const trades = closedTrades([
      fill('a', 'SELL', '1', '100', 1),
      fill('b', 'BUY', '1', '90', 2),
      fill('a', 'BUY', '1', '95', 3),
    ]);
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ book: 'a', direction: 'short' });
    expect(trades[0]!.pnl.toFixed()).toBe('5');
    expect(tradeStats(trades).profitFactor).toBeUndefined();
  });

  it('group stats by a tag, trades without one under (none)', () => {
    const trades = closedTrades([
      fill('g', 'BUY', '1', '100', 1, { orderId: '1' }),
      fill('g', 'SELL', '1', '110', 2, { orderId: '2', tag: 'tp' }),
      fill('g', 'BUY', '1', '100', 3, { orderId: '3' }),
      fill('g', 'SELL', '1', '95', 4, { orderId: '4', tag: 'stop' }),
      fill('g', 'BUY', '1', '100', 5, { orderId: '5' }),
      fill('g', 'SELL', '1', '101', 6, { orderId: '6' }),
    ]);
    const groups = statsBy(trades, (t) => t.exitTag);
    expect(groups.map((g) => [g.key, g.stats.trades, g.stats.pnl.toFixed()])).toEqual([
      ['(none)', 1, '1'],
      ['stop', 1, '-5'],
      ['tp', 1, '10'],
    ]);
  });
});

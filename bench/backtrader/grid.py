"""The shipped grid (config/grid-btcusdt.json) mirrored in backtrader, for bench:backtest's CPU comparison.

python3 grid.py CANDLES.csv  (CSV: epoch seconds, open, high, low, close, volume; one-minute candles)
Needs backtrader importable (bench:backtest puts --backtrader DIR on PYTHONPATH). Prints one JSON line: bars,
orders, fills and the CPU seconds of the load and the run (the process's start-up apart).

The same ladder as strategies/grid.ts: levels 5 on each side of the first price, 0.3 % apart, 0.001 BTC an
order; slot j buys at level j (below the reference, when that level is under the market) and, once filled, sells
at level j + 1; a filled sell arms the buy again. The budget (200 USDT) never binds at these prices, so it is not
modelled; fills are backtrader's own (a limit fills on the next bar that trades through it).
"""

import json
import sys
import time

import backtrader as bt

LEVELS = 5
SPACING_PCT = 0.3
QUANTITY = 0.001


class Grid(bt.Strategy):
    def __init__(self):
        self.reference = None
        self.step = None
        # Per slot: the open order (buy or sell), and whether the slot holds base (bought, not sold yet).
        self.open = {}
        self.held = {}
        self.placed = 0
        self.fills = 0

    def level(self, j):
        return round(self.reference + self.step * j, 2)

    def next(self):
        price = self.data.close[0]
        if self.reference is None:
            self.reference = self.data.open[0]
            self.step = self.reference * SPACING_PCT / 100
        for j in range(-LEVELS, 0):
            if j in self.open:
                continue
            if self.held.get(j):
                self.open[j] = self.sell(price=self.level(j + 1), size=QUANTITY, exectype=bt.Order.Limit)
                self.placed += 1
            elif self.level(j) < price:
                self.open[j] = self.buy(price=self.level(j), size=QUANTITY, exectype=bt.Order.Limit)
                self.placed += 1

    def notify_order(self, order):
        if order.status not in (order.Completed, order.Canceled, order.Margin, order.Rejected):
            return
        for j, o in list(self.open.items()):
            if o.ref == order.ref:
                del self.open[j]
                if order.status == order.Completed:
                    self.fills += 1
                    self.held[j] = order.isbuy()
                break


def main(path):
    cpu0 = time.process_time()
    cerebro = bt.Cerebro(stdstats=False)
    data = bt.feeds.GenericCSVData(
        dataname=path,
        dtformat=2,
        timeframe=bt.TimeFrame.Minutes,
        compression=1,
        datetime=0,
        open=1,
        high=2,
        low=3,
        close=4,
        volume=5,
        openinterest=-1,
        headers=False,
    )
    cerebro.adddata(data)
    cerebro.addstrategy(Grid)
    cerebro.broker.setcash(10000.0)
    cerebro.broker.setcommission(commission=0.001)
    strategy = cerebro.run()[0]
    cpu1 = time.process_time()
    print(
        json.dumps(
            {
                "bars": len(data),
                "orders": strategy.placed,
                "fills": strategy.fills,
                "cpuSeconds": cpu1 - cpu0,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])

// Candles and the strategies' declared indicators on a Lightweight Charts chart, for the daemon's page and
// report.html alike (the page serves this file as /assets/candle-chart.js; the report inlines it). The data is
// strategy/indicator-chart.ts's: one slot per bucket of the timeframe, an empty slot where no candle opened, so the
// time axis is linear in time and a hole in the data shows as a hole. Moving averages, bands and VWAP are drawn
// over the price; each oscillator (RSI, MACD, stochastic, ATR) in a pane of its own under it. Nothing is written
// on the price scales but their own figures: the series' names and colours are the caller's legend (`legend()`).
'use strict';
(function () {
  const L = window.LightweightCharts;
  const UP = '#089981';
  const DOWN = '#f23645';
  const PALETTE = ['#ff9800', '#7e57c2', '#00897b', '#c2185b', '#3949ab', '#6d4c41', '#f06292', '#26a69a'];
  /** Share of the height of the price pane against one oscillator pane. */
  const PRICE_STRETCH = 3;

  /** The options both faces' charts share: no logo (the credit is in the footer), figures drawn whole. */
  function chartOptions(extra) {
    return Object.assign(
      {
        layout: {
          background: { color: '#ffffff' },
          textColor: '#394150',
          fontSize: 11,
          attributionLogo: false,
          panes: { separatorColor: '#e3e7ef' },
        },
        grid: { vertLines: { color: '#f0f2f6' }, horzLines: { color: '#f0f2f6' } },
        // A figure that would be cut at the scale's top or bottom edge is not drawn.
        rightPriceScale: { borderColor: '#e3e7ef', entireTextOnly: true, minimumWidth: 64 },
        // Fixed edges make the library shift the first and last time labels inside the chart instead of cutting
        // them; a small bar spacing lets a phone show a day of minutes whole.
        timeScale: {
          borderColor: '#e3e7ef',
          timeVisible: true,
          secondsVisible: false,
          fixLeftEdge: true,
          fixRightEdge: true,
          minBarSpacing: 0.01,
        },
      },
      extra,
    );
  }

  /** Slot k's time in the chart's unit (whole seconds). */
  const slotTime = (data, k) => Math.floor((data.start + k * data.step) / 1000);

  /** The slot holding epoch time `ms` (its bucket), or -1 before the first. */
  function slotOf(data, ms) {
    if (data.candles.length === 0 || ms < data.start) return -1;
    return Math.min(data.candles.length - 1, Math.floor((ms - data.start) / data.step));
  }

  function candleRows(data) {
    return data.candles.map((c, k) =>
      c === null
        ? { time: slotTime(data, k) }
        : { time: slotTime(data, k), open: c[0], high: c[1], low: c[2], close: c[3] },
    );
  }

  function lineRows(data, values) {
    return values.map((v, k) => (v === null ? { time: slotTime(data, k) } : { time: slotTime(data, k), value: v }));
  }

  const lineName = (ind, line) =>
    `${ind.instance} ${ind.name}${line.key === 'value' ? '' : ` ${line.key}`} (${ind.kind} ${ind.timeframe})`;

  /**
   * A chart of candles on `chart`, from pane `base` (the report draws several symbols, one under the other): `set(data)`
   * draws (again) the candles and every indicator line, `legend()` names the lines with their colours and panes,
   * `candles` is the candle series (markers, price lines), `data` what was drawn, `nextPane` the first pane after its
   * own (its oscillators').
   */
  function create(chart, base = 0) {
    const candles = chart.addSeries(
      L.CandlestickSeries,
      {
        upColor: UP,
        downColor: DOWN,
        borderVisible: false,
        wickUpColor: UP,
        wickDownColor: DOWN,
        priceLineVisible: false,
        lastValueVisible: false,
      },
      base,
    );
    /** Indicator line series by name, with their colour and pane. */
    const lines = new Map();
    const handle = { chart, candles, data: null, set, legend, nextPane: base + 1 };

    function set(data) {
      handle.data = data;
      candles.setData(candleRows(data));
      const seen = new Set();
      let pane = base;
      for (const ind of data.indicators) {
        const own = ind.pane === 'own' ? ++pane : base;
        for (const line of ind.lines) {
          const name = lineName(ind, line);
          seen.add(name);
          let entry = lines.get(name);
          if (entry && entry.pane !== own) {
            chart.removeSeries(entry.series);
            entry = undefined;
          }
          if (!entry) {
            const color = PALETTE[lines.size % PALETTE.length];
            const series = chart.addSeries(
              L.LineSeries,
              { color, lineWidth: 1, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false },
              own,
            );
            entry = { series, color, pane: own, name };
            lines.set(name, entry);
          }
          entry.series.setData(lineRows(data, line.values));
        }
      }
      for (const [name, entry] of lines)
        if (!seen.has(name)) {
          chart.removeSeries(entry.series);
          lines.delete(name);
        }
      handle.nextPane = pane + 1;
      // The price keeps the larger share of the height, each oscillator a share of its own.
      const panes = chart.panes();
      for (let i = base; i <= pane && i < panes.length; i++) panes[i].setStretchFactor(i === base ? PRICE_STRETCH : 1);
      chart.timeScale().fitContent();
    }

    function legend() {
      return [...lines.values()].map((e) => ({ name: e.name, color: e.color, overPrice: e.pane === base }));
    }
    return handle;
  }

  window.CandleChart = { create, chartOptions, slotOf, slotTime, UP, DOWN };
})();

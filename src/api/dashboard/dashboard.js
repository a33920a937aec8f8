// The dashboard: reads the control API (/api/v1) and polls it, conditional on ETags where it can; every
// action asks for a confirmation first. No framework, no build step, nothing loaded from elsewhere.
'use strict';
(function () {
  const L = window.LightweightCharts;
  const TOKEN_KEY = 'spot-bot-api-token';
  const $ = (id) => document.getElementById(id);
  const state = { status: null, etag: null, daemon: null, charts: new Map(), equity: null, waitingForToken: false };

  // --- the API -------------------------------------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error && body.error.message) || `HTTP ${status}`);
      this.status = status;
      this.body = body;
    }
  }

  async function api(path, options = {}) {
    const headers = Object.assign({}, options.headers);
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, {
      method: options.method || 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-cache',
    });
    if (res.status === 304) return { notModified: true, res };
    const text = await res.text();
    const body = text ? JSON.parse(text) : null;
    if (res.status === 401) askToken(token ? 'That token was refused.' : '');
    if (!res.ok) throw new ApiError(res.status, body);
    return { body, res };
  }

  function askToken(message) {
    if (state.waitingForToken) return;
    state.waitingForToken = true;
    $('token-error').textContent = message;
    $('token-dialog').showModal();
  }

  $('token-form').addEventListener('submit', () => {
    sessionStorage.setItem(TOKEN_KEY, $('token-input').value.trim());
    $('token-input').value = '';
    state.waitingForToken = false;
    state.etag = null;
    void refreshAll();
  });

  function confirmAction(title, text, okLabel) {
    const dialog = $('confirm-dialog');
    $('confirm-title').textContent = title;
    $('confirm-text').textContent = text;
    $('confirm-ok').textContent = okLabel;
    dialog.returnValue = '';
    dialog.showModal();
    return new Promise((resolve) =>
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }),
    );
  }

  async function act(title, text, okLabel, path, method, body) {
    if (!(await confirmAction(title, text, okLabel))) return;
    try {
      const { body: result } = await api(path, { method, body });
      flash(`${result.action}: ${result.outcome}`, false);
    } catch (err) {
      const problems = err.body && err.body.error && err.body.error.problems;
      flash(`${err.message}${problems ? ` (${problems.join('; ')})` : ''}`, true);
    }
    state.etag = null;
    await refreshStatus();
  }

  // --- formatting ----------------------------------------------------------------------------------------
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'class') node.className = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  };
  const num = (text, digits = 8) => {
    if (text === null || text === undefined) return '–';
    const n = Number(text);
    if (!Number.isFinite(n)) return String(text);
    return n.toLocaleString(undefined, { maximumFractionDigits: Math.abs(n) >= 1000 ? 2 : digits });
  };
  const signed = (text) => {
    const n = Number(text);
    return el('span', { class: n > 0 ? 'pos' : n < 0 ? 'neg' : '' }, num(text, 4));
  };
  const time = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '–');
  /** Today's times without the date (the tables stay narrow on a phone). */
  const shortTime = (iso) =>
    iso && iso.slice(0, 10) === new Date().toISOString().slice(0, 10) ? iso.slice(11, 19) : time(iso);
  const seconds = (ms) => Math.floor(ms / 1000);

  let flashTimer;
  function flash(message, isError) {
    const box = $('alerts');
    box.querySelectorAll('.flash').forEach((n) => n.remove());
    box.prepend(el('div', { class: `alert flash${isError ? ' error' : ''}` }, message));
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => box.querySelectorAll('.flash').forEach((n) => n.remove()), 6000);
  }

  // --- rendering -----------------------------------------------------------------------------------------
  function renderBanner() {
    const d = state.daemon;
    const s = state.status;
    if (d) {
      $('banner').classList.toggle('live', d.mode === 'live');
      $('mode').textContent = d.mode === 'live' ? 'LIVE' : 'PAPER';
      $('venue').textContent = d.venue;
      $('venue').title = d.banner;
    }
    if (!s) return;
    const kill = $('kill');
    kill.disabled = false;
    kill.classList.toggle('on', s.killSwitch.on);
    kill.textContent = s.killSwitch.on ? 'Kill switch ON — turn off' : 'Kill switch';
    const alerts = [];
    if (s.daemon.state !== 'running') alerts.push(['error', `The daemon is ${s.daemon.state}.`]);
    if (s.killSwitch.on) alerts.push(['', `Kill switch on (${s.killSwitch.file}): no new orders.`]);
    if (s.authHalted) {
      const button = el('button', { type: 'button', onclick: clearHalt }, 'Clear halt');
      alerts.push([
        'error',
        el(
          'span',
          {},
          `Trading halted: authentication failed (${(s.authFailure && s.authFailure.message) || ''}). `,
          button,
        ),
      ]);
    }
    if (s.circuitBreaker && s.circuitBreaker.state === 'open' && Number(s.circuitBreaker.until) > Date.now())
      alerts.push(['', `Circuit breaker open after repeated venue errors.`]);
    const box = $('alerts');
    box.querySelectorAll('.state-alert').forEach((n) => n.remove());
    for (const [kind, content] of alerts) box.append(el('div', { class: `alert state-alert ${kind}` }, content));
    $('footer').textContent = `status at ${time(s.time)} UTC · daemon pid ${s.daemon.pid ?? '–'} · updates every 2 s`;
  }

  function renderInstances() {
    const s = state.status;
    const box = $('instances');
    box.replaceChildren();
    if (!s || s.instances.length === 0) {
      box.append(el('p', { class: 'muted' }, 'No instance has run yet.'));
      return;
    }
    const config = new Map(((state.daemon && state.daemon.instances) || []).map((i) => [i.name, i]));
    for (const i of s.instances) {
      const c = config.get(i.instance);
      const canPause = i.state === 'running';
      const canResume = i.state === 'paused';
      const button =
        canPause || canResume
          ? el(
              'button',
              {
                type: 'button',
                class: canPause ? '' : 'primary',
                'data-action': canPause ? 'pause' : 'resume',
                'data-instance': i.instance,
                onclick: () =>
                  act(
                    `${canPause ? 'Pause' : 'Resume'} ${i.instance}?`,
                    canPause
                      ? 'It places nothing while paused; its open orders stay on the exchange.'
                      : 'Its strategy runs again from its saved state.',
                    canPause ? 'Pause' : 'Resume',
                    `/api/v1/instances/${encodeURIComponent(i.instance)}/${canPause ? 'pause' : 'resume'}`,
                    'POST',
                  ),
              },
              canPause ? 'Pause' : 'Resume',
            )
          : null;
      const orders = el('ul', { class: 'orders' });
      for (const o of i.openOrders)
        orders.append(
          el(
            'li',
            {},
            el('span', { class: o.side }, o.side),
            `${o.type} ${num(o.quantity)} @ ${num(o.price ?? o.stopPrice ?? o.limitPrice)}`,
            el('span', { class: 'muted' }, o.status),
          ),
        );
      box.append(
        el(
          'article',
          { class: 'instance', 'data-instance': i.instance },
          el(
            'header',
            {},
            el('span', { class: 'name' }, i.instance),
            el('span', { class: `badge ${i.state}`, 'data-state': i.state }, i.state),
            el('span', { class: 'spacer' }),
            button,
          ),
          el(
            'div',
            { class: 'meta muted small' },
            [c ? c.symbol : i.symbols.join(', '), c ? `schedule ${c.schedule}` : ''].filter(Boolean).join(' · '),
          ),
          i.reason ? el('div', { class: 'reason' }, i.reason) : null,
          el(
            'div',
            { class: 'figures' },
            el(
              'div',
              {},
              el('span', { class: 'label' }, 'position'),
              el('span', { class: 'value' }, num(i.position.quantity)),
            ),
            el(
              'div',
              {},
              el('span', { class: 'label' }, 'realised'),
              el('span', { class: 'value' }, signed(i.realisedPnl)),
            ),
            el(
              'div',
              {},
              el('span', { class: 'label' }, 'unrealised'),
              el('span', { class: 'value' }, i.unrealisedPnl === null ? '–' : signed(i.unrealisedPnl)),
            ),
            el(
              'div',
              {},
              el('span', { class: 'label' }, 'open orders'),
              el('span', { class: 'value' }, String(i.openOrders.length)),
            ),
          ),
          i.openOrders.length > 0 ? orders : null,
        ),
      );
    }
  }

  function renderActions() {
    const list = $('actions');
    list.replaceChildren();
    const actions = (state.status && state.status.recentActions) || [];
    if (actions.length === 0) list.append(el('li', { class: 'muted' }, 'None yet.'));
    for (const a of actions) {
      const d = a.data;
      const subject = d.instance || d.order || (d.on === undefined ? '' : d.on ? 'on' : 'off');
      list.append(
        el(
          'li',
          {},
          el('span', { class: 'muted' }, `${shortTime(a.time)} `),
          `${d.action} ${subject}: ${d.outcome}`,
          el('span', { class: 'muted' }, ` (${d.source})`),
        ),
      );
    }
  }

  /** The embedded simulated exchange's account (paper only): its history across the daemon's restarts. */
  function renderPaper() {
    const paper = state.status && state.status.paper;
    $('paper-card').hidden = !paper;
    if (!paper) return;
    const held = paper.balances
      .filter((b) => b.free !== '0' || b.locked !== '0')
      .map((b) => `${b.asset} ${b.free}${b.locked === '0' ? '' : ` (+${b.locked} locked)`}`);
    const funded = Object.entries(paper.funding).map(([asset, amount]) => `${asset} ${amount}`);
    const facts = [
      [
        'since',
        `${paper.since.slice(0, 16).replace('T', ' ')} UTC, on ${paper.data === 'live' ? 'live prices' : 'recorded data'}`,
      ],
      ['daemon runs', String(paper.runs)],
      ['orders', `${paper.orders} (${paper.openOrders} open), ${paper.fills} fills`],
      ['balances', held.join(', ') || 'none'],
      ['funded with', funded.join(', ')],
    ];
    if (paper.replayed !== null) facts.push(['replay', `ticker ${paper.replayed} of the current pass`]);
    $('paper').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { 'data-fact': k }, v)]));
  }

  function renderFills(fills) {
    const body = $('fills').querySelector('tbody');
    body.replaceChildren();
    if (fills.length === 0) body.append(el('tr', {}, el('td', { colspan: '6', class: 'muted' }, 'No fills yet.')));
    for (const f of fills)
      body.append(
        el(
          'tr',
          {},
          el('td', {}, shortTime(f.time)),
          el('td', {}, f.instance ?? 'external'),
          el('td', { class: f.side }, f.side),
          el('td', { class: 'num' }, num(f.price)),
          el('td', { class: 'num' }, num(f.quantity)),
          el('td', { class: 'num' }, `${num(f.fee)} ${f.feeAsset ?? ''}`),
        ),
      );
  }

  const chartOptions = () => ({
    autoSize: true,
    // No logo over the data: the library's credit is in the footer.
    layout: { background: { color: '#ffffff' }, textColor: '#394150', fontSize: 11, attributionLogo: false },
    grid: { vertLines: { color: '#f0f2f6' }, horzLines: { color: '#f0f2f6' } },
    rightPriceScale: { borderColor: '#e3e7ef' },
    // Fixed edges make the library shift the first and last time labels inside the chart instead of cutting them.
    timeScale: {
      borderColor: '#e3e7ef',
      timeVisible: true,
      secondsVisible: true,
      fixLeftEdge: true,
      fixRightEdge: true,
    },
  });

  /** Points with strictly increasing whole-second times (the last value of each second). */
  function perSecond(points) {
    const out = [];
    for (const [t, value] of points) {
      const time = seconds(t);
      if (out.length > 0 && out[out.length - 1].time >= time)
        out[out.length - 1] = { time: out[out.length - 1].time, value };
      else out.push({ time, value });
    }
    return out;
  }

  function symbolChart(symbol) {
    let chart = state.charts.get(symbol);
    if (chart) return chart;
    const box = el('div', { class: 'chart' });
    const wrap = el('div', { class: 'symbol-chart', 'data-symbol': symbol }, el('h3', {}, symbol), box);
    $('charts').append(wrap);
    const c = L.createChart(box, chartOptions());
    const series = c.addSeries(L.LineSeries, { color: '#2962ff', lineWidth: 2, priceLineVisible: true });
    chart = { chart: c, series, markers: L.createSeriesMarkers(series, []), lines: [], data: [] };
    state.charts.set(symbol, chart);
    return chart;
  }

  function renderPrices(prices, fills) {
    const s = state.status;
    for (const [symbol, points] of Object.entries(prices.recent)) {
      const chart = symbolChart(symbol);
      chart.data = perSecond(points);
      chart.series.setData(chart.data);
      // The whole recent window, always: the page is for a glance, not for study.
      chart.chart.timeScale().fitContent();
      for (const line of chart.lines) chart.series.removePriceLine(line);
      chart.lines = [];
      const open = s ? s.instances.flatMap((i) => i.openOrders).filter((o) => o.symbol === symbol) : [];
      for (const o of open) {
        const price = Number(o.price ?? o.limitPrice ?? o.stopPrice);
        if (!Number.isFinite(price)) continue;
        chart.lines.push(
          chart.series.createPriceLine({
            price,
            color: o.side === 'BUY' ? '#089981' : '#f23645',
            lineWidth: 1,
            lineStyle: L.LineStyle.Dashed,
            axisLabelVisible: true,
            title: `${o.side} ${o.type}`,
          }),
        );
      }
      // Each fill marked at the chart's nearest time at or before it (markers sit on the series' times).
      const times = chart.data.map((p) => p.time);
      const markers = [];
      for (const f of fills.filter((x) => x.symbol === symbol).reverse()) {
        const t = seconds(Date.parse(f.time));
        let k = times.length - 1;
        while (k > 0 && times[k] > t) k--;
        if (k < 0 || times.length === 0 || times[0] > t) continue;
        const buy = f.side === 'BUY';
        markers.push({
          time: times[k],
          position: buy ? 'belowBar' : 'aboveBar',
          shape: buy ? 'arrowUp' : 'arrowDown',
          color: buy ? '#089981' : '#f23645',
          text: buy ? 'B' : 'S',
        });
      }
      markers.sort((a, b) => a.time - b.time);
      chart.markers.setMarkers(markers);
    }
    if (Object.keys(prices.recent).length === 0 && $('charts').childElementCount === 0)
      $('charts').append(el('p', { class: 'muted', id: 'no-prices' }, 'No prices seen yet.'));
    else $('no-prices')?.remove();
  }

  const PALETTE = ['#7e57c2', '#ef6c00', '#00897b', '#c2185b', '#3949ab', '#6d4c41'];
  function renderEquity(pnl) {
    if (!state.equity) {
      const c = L.createChart($('equity'), chartOptions());
      state.equity = { chart: c, series: new Map() };
    }
    const eq = state.equity;
    let k = eq.series.size;
    for (const [instance, points] of Object.entries(pnl.instances)) {
      let series = eq.series.get(instance);
      if (!series) {
        series = eq.chart.addSeries(L.LineSeries, {
          color: PALETTE[k++ % PALETTE.length],
          lineWidth: 2,
          title: instance,
        });
        eq.series.set(instance, series);
      }
      series.setData(perSecond(points.map((p) => [p.time, Number(p.total)])));
    }
    if (eq.series.size > 0) eq.chart.timeScale().fitContent();
  }

  // --- polling -------------------------------------------------------------------------------------------
  async function clearHalt() {
    await act(
      'Clear the authentication halt?',
      'The bot makes a signed read first; trading resumes only if it succeeds.',
      'Clear halt',
      '/api/v1/halt/clear',
      'POST',
    );
  }

  $('kill').addEventListener('click', () => {
    const on = !(state.status && state.status.killSwitch.on);
    void act(
      on ? 'Turn the kill switch on?' : 'Turn the kill switch off?',
      on
        ? 'No instance places a new order until it is off again. Open orders stay.'
        : 'Instances may place orders again.',
      on ? 'Kill switch on' : 'Turn off',
      '/api/v1/kill-switch',
      'PUT',
      { on },
    );
  });

  async function refreshStatus() {
    const headers = state.etag ? { 'if-none-match': state.etag } : {};
    const result = await api('/api/v1/status', { headers });
    if (result.notModified) return false;
    state.status = result.body;
    state.etag = result.res.headers.get('etag');
    renderBanner();
    renderInstances();
    renderPaper();
    renderActions();
    return true;
  }

  async function refreshReady() {
    const res = await fetch('/readyz', { cache: 'no-cache' });
    const body = await res.json();
    const pill = $('ready');
    pill.className = `pill ${body.ready ? 'ok' : 'bad'}`;
    pill.textContent = body.ready ? 'ready' : 'not ready';
    pill.title =
      body.checks
        .filter((c) => !c.ok)
        .map((c) => `${c.name}: ${c.detail}`)
        .join('\n') || 'every check passes';
  }

  async function refreshAll() {
    try {
      if (!state.daemon) state.daemon = (await api('/api/v1/daemon')).body;
      await refreshStatus();
      const [prices, fills, pnl] = await Promise.all([
        api('/api/v1/prices'),
        api('/api/v1/fills?limit=50'),
        api('/api/v1/pnl'),
      ]);
      renderBanner();
      renderFills(fills.body.fills);
      renderPrices(prices.body, fills.body.fills);
      renderEquity(pnl.body);
      await refreshReady();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) flash(`Cannot read the control API: ${err.message}`, true);
    }
  }

  const auth = document.querySelector('meta[name="spot-bot-auth"]');
  if (auth && auth.content === 'token' && !sessionStorage.getItem(TOKEN_KEY)) askToken('');

  async function loop() {
    if (!state.waitingForToken && document.visibilityState !== 'hidden') await refreshAll();
    setTimeout(loop, 2000);
  }
  void loop();
})();

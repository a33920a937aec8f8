// The dashboard: reads the control API (/api/v1) once, then follows its live stream (/api/v1/stream,
// server-sent events read through fetch so the token goes in a header), and polls every 2 s only while the
// stream cannot be had. Every action goes through the control API (the operator layer) after a confirmation,
// and says what it did or why not. No framework, no build step, nothing loaded from elsewhere.
'use strict';
(function () {
  const L = window.LightweightCharts;
  const TOKEN_KEY = 'spot-bot-api-token';
  const POLL_MS = 2000;
  const $ = (id) => document.getElementById(id);
  const state = {
    status: null,
    daemon: null,
    fills: [],
    charts: new Map(),
    equity: null,
    /** The last PnL read (/api/v1/pnl), drawn again when a pair's row opens or closes. */
    pnl: null,
    period: 'day',
    waitingForToken: false,
    /** The pairs of multi-pair files whose rows are open (their card and chart shown), by instance name. */
    openPairs: new Set(),
    /** 'live' (the stream is open), 'polling' (it is not: why in streamProblem), or 'starting'. */
    updates: 'starting',
    streamProblem: '',
  };
  const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // --- the API -------------------------------------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error && body.error.message) || `HTTP ${status}`);
      this.status = status;
      this.body = body;
      this.code = body && body.error && body.error.code;
    }
  }

  function authHeaders(extra) {
    const headers = Object.assign({}, extra);
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  async function api(path, options = {}) {
    const headers = authHeaders(options.headers);
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, {
      method: options.method || 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-cache',
    });
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (res.status === 401) askToken(sessionStorage.getItem(TOKEN_KEY) ? 'That token was refused.' : '');
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
    void refreshAll();
  });

  function openDialog(dialog) {
    dialog.returnValue = '';
    dialog.showModal();
    return new Promise((resolve) =>
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }),
    );
  }

  function confirmAction(title, text, okLabel) {
    $('confirm-title').textContent = title;
    $('confirm-text').textContent = text;
    $('confirm-ok').textContent = okLabel;
    return openDialog($('confirm-dialog'));
  }

  /** What went wrong, for a person: the API's message, every problem it named, and its stable code. */
  function errorText(err) {
    const problems = err.body && err.body.error && err.body.error.problems;
    const list = Array.isArray(problems) && problems.length > 0 ? `: ${problems.join('; ')}` : '';
    return `${err.message}${list}${err.code ? ` (${err.code})` : ''}`;
  }

  /** Sends an action and says what it did, or why not; then reads the status again. */
  async function send(path, method, body) {
    try {
      const { body: result } = await api(path, { method, body });
      flash(`${result.action}: ${result.outcome}`, false);
    } catch (err) {
      flash(`Refused: ${errorText(err)}`, true);
    }
    await refreshStatus();
  }

  async function act(title, text, okLabel, path, method, body) {
    if (!(await confirmAction(title, text, okLabel))) return;
    await send(path, method, body);
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
  /**
   * Decimal text for reading, rounded on its digits (half to even) and never through a float: at most `digits`
   * places (2 from 1,000 up), trailing zeros dropped, thousands grouped. The API already rounds to the pair.
   */
  const num = (text, digits = 8) => {
    if (text === null || text === undefined) return '–';
    const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(text));
    if (!m) return String(text);
    let [, sign, int, frac = ''] = m;
    const places = int.replace(/^0+/, '').length >= 4 ? Math.min(digits, 2) : digits;
    if (frac.length > places) {
      const kept = int + frac.slice(0, places);
      const rest = frac.slice(places);
      const odd = Number(kept[kept.length - 1]) % 2 === 1;
      const up = rest[0] > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || odd));
      let digitsText = kept;
      if (up) {
        const chars = digitsText.split('');
        let i = chars.length - 1;
        while (i >= 0 && chars[i] === '9') chars[i--] = '0';
        if (i < 0) chars.unshift('1');
        else chars[i] = String(Number(chars[i]) + 1);
        digitsText = chars.join('');
      }
      int = digitsText.slice(0, digitsText.length - places) || '0';
      frac = digitsText.slice(digitsText.length - places);
    }
    frac = frac.replace(/0+$/, '');
    int = int.replace(/^0+(?=\d)/, '');
    if (/^0*$/.test(int + frac)) sign = '';
    return `${sign}${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac === '' ? '' : `.${frac}`}`;
  };
  const signed = (text, digits = 4) => {
    if (text === null || text === undefined) return '–';
    const n = Number(text);
    return el('span', { class: n > 0 ? 'pos' : n < 0 ? 'neg' : '' }, num(text, digits));
  };
  const time = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '–');
  /** Times on the venue's day without the date (the tables stay narrow on a phone). */
  const shortTime = (iso) => {
    const today = state.status && state.status.time ? state.status.time.slice(0, 10) : '';
    return iso && iso.slice(0, 10) === today ? iso.slice(11, 19) : time(iso);
  };
  const seconds = (ms) => Math.floor(ms / 1000);
  const duration = (ms) => {
    const s = Math.round(ms / 1000);
    if (s < 120) return `${s} s`;
    if (s < 7200) return `${Math.round(s / 60)} min`;
    if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
    return `${(s / 86400).toFixed(1)} d`;
  };

  let flashTimer;
  function flash(message, isError) {
    const box = $('alerts');
    box.querySelectorAll('.flash').forEach((n) => n.remove());
    box.prepend(
      el('div', { class: `alert flash${isError ? ' error' : ''}`, 'data-flash': isError ? 'error' : 'ok' }, message),
    );
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => box.querySelectorAll('.flash').forEach((n) => n.remove()), isError ? 15000 : 8000);
  }

  // --- orders: every leg --------------------------------------------------------------------------------
  /**
   * The legs of an open order, each a price the order acts at: a LIMIT's price; a STOP_LIMIT's stop and its
   * limit; an OCO's limit (maker) leg, its stop and its stop-limit.
   */
  function legs(o) {
    const out = [];
    const add = (kind, price) => {
      if (price !== null && price !== undefined && Number.isFinite(Number(price))) out.push({ kind, price });
    };
    if (o.type === 'OCO') {
      add('limit', o.price);
      add('stop', o.stopPrice);
      add('stop-limit', o.limitPrice);
    } else if (o.type === 'STOP_LIMIT') {
      add('stop', o.stopPrice);
      add('limit', o.price ?? o.limitPrice);
    } else add('limit', o.price ?? o.limitPrice);
    return out;
  }

  function orderLine(o) {
    const quantity = o.quantity !== null ? num(o.quantity) : `${num(o.quoteAmount)} quote`;
    const parts = legs(o).map((leg) =>
      el('span', { class: `leg ${leg.kind}`, 'data-leg': leg.kind }, `${leg.kind} ${num(leg.price)}`),
    );
    const cancel = el(
      'button',
      {
        type: 'button',
        class: 'small-button',
        'data-cancel': o.localId,
        title: 'Cancel this order on the exchange',
        onclick: () =>
          act(
            `Cancel ${o.side} ${o.type} ${quantity}?`,
            `${o.symbol}, ${legs(o)
              .map((leg) => `${leg.kind} ${leg.price}`)
              .join(', ')}. The order is cancelled on the exchange (every leg of an OCO).`,
            'Cancel order',
            `/api/v1/orders/${encodeURIComponent(o.localId)}`,
            'DELETE',
          ),
      },
      'Cancel',
    );
    return el(
      'li',
      { 'data-order': o.localId, 'data-order-type': o.type },
      el('span', { class: o.side }, o.side),
      el('span', { class: 'what' }, `${o.type} ${quantity}`, ...parts.flatMap((p) => [' ', p])),
      el('span', { class: 'muted' }, o.status),
      cancel,
    );
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
    const stopBuy = $('stop-buy');
    stopBuy.disabled = false;
    stopBuy.classList.toggle('on', s.stopBuy.on);
    stopBuy.textContent = s.stopBuy.on ? 'Stop-buy ON — turn off' : 'Stop-buy';
    const alerts = [];
    if (s.daemon.state !== 'running') alerts.push(['error', `The daemon is ${s.daemon.state}.`]);
    if (s.killSwitch.on) alerts.push(['', `Kill switch on (${s.killSwitch.file}): no new orders.`]);
    if (s.stopBuy.on)
      alerts.push(['', 'Stop-buy on: no new BUY orders; exits and protective SELL orders still go out.']);
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
    // The daemon's own clock says whose time the venue keeps (a lockstep replay runs on the wall's).
    $('time-note').textContent =
      s.clock && s.clock.venueClock === 'data' ? '; on paper on a recording, that is the recording’s time' : '';
    renderFooter();
  }

  function renderFooter() {
    const s = state.status;
    const updates =
      state.updates === 'live'
        ? 'live updates (pushed)'
        : state.updates === 'polling'
          ? `polling every ${POLL_MS / 1000} s (no live stream: ${state.streamProblem})`
          : 'connecting';
    $('footer').dataset.updates = state.updates;
    // Both clocks, labelled, when the venue runs on a recording's time.
    const at =
      s && s.clock && s.clock.venueClock === 'data'
        ? `venue ${time(s.clock.venue)} UTC (the recording's time) · wall ${time(s.clock.wall)} UTC`
        : s && `${time(s.time)} UTC (venue time)`;
    $('footer').textContent = s ? `status at ${at} · daemon pid ${s.daemon.pid ?? '–'} · ${updates}` : updates;
  }

  function instanceButton(label, action, i, options) {
    return el(
      'button',
      {
        type: 'button',
        class: options.primary ? 'primary' : options.danger ? 'danger' : '',
        'data-action': action,
        'data-instance': i.instance,
        onclick: options.onclick,
      },
      label,
    );
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
    const byName = new Map(s.instances.map((i) => [i.instance, i]));
    const groups = new Map((s.groups || []).map((g) => [g.name, g]));
    const shown = new Set();
    for (const i of s.instances) {
      const g = i.group === null ? undefined : groups.get(i.group);
      if (g === undefined) box.append(instanceCard(i, config.get(i.instance)));
      else if (!shown.has(g.name)) {
        shown.add(g.name);
        box.append(groupCard(g, byName, config));
      }
    }
  }

  /** One instance: its state, its buttons (each after a confirmation), its figures and its open orders. */
  function instanceCard(i, c) {
    const path = (what) => `/api/v1/instances/${encodeURIComponent(i.instance)}/${what}`;
    const buttons = [];
    if (i.state === 'running')
      buttons.push(
        instanceButton('Pause', 'pause', i, {
          onclick: () =>
            act(
              `Pause ${i.instance}?`,
              'It places nothing while paused; its open orders stay on the exchange.',
              'Pause',
              path('pause'),
              'POST',
            ),
        }),
      );
    if (i.state === 'paused')
      buttons.push(
        instanceButton('Resume', 'resume', i, {
          primary: true,
          onclick: () =>
            act(
              `Resume ${i.instance}?`,
              'Its strategy runs again from its saved state.',
              'Resume',
              path('resume'),
              'POST',
            ),
        }),
      );
    if (i.state === 'running') buttons.push(instanceButton('Enter', 'entry', i, { onclick: () => entryDialog(i, c) }));
    if ((i.state === 'running' || i.state === 'paused') && Number(i.position.quantity) > 0)
      buttons.push(instanceButton('Exit', 'exit', i, { danger: true, onclick: () => exitDialog(i) }));
    const orders = el('ul', { class: 'orders' });
    for (const o of i.openOrders) orders.append(orderLine(o));
    return el(
      'article',
      { class: 'instance', 'data-instance': i.instance },
      el(
        'header',
        {},
        el('span', { class: 'name' }, i.instance),
        el('span', { class: `badge ${i.state}`, 'data-state': i.state }, i.state),
        // The buttons keep together at the right, on the name's line or (a narrow card) under it.
        el('span', { class: 'actions' }, ...buttons),
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
        figure('position', num(i.position.quantity), 'position'),
        figure('realised', signed(i.realisedPnl)),
        figure('unrealised', signed(i.unrealisedPnl)),
        figure('open orders', String(i.openOrders.length)),
      ),
      i.openOrders.length > 0 ? orders : null,
    );
  }

  /**
   * A multi-pair strategy file: its figures together, then a row per pair (its state, what it holds, its PnL) and
   * the file's total per quote asset. A pair's row opens its own card (buttons, orders) and its price chart.
   */
  function groupCard(g, byName, config) {
    const rows = [];
    for (const name of g.instances) {
      const i = byName.get(name);
      const open = state.openPairs.has(name);
      const toggle = el(
        'button',
        {
          type: 'button',
          class: 'pair-toggle',
          'aria-expanded': String(open),
          title: open ? 'Hide this pair’s card and chart' : 'Show this pair’s card (its buttons and orders) and chart',
          onclick: () => {
            if (open) state.openPairs.delete(name);
            else state.openPairs.add(name);
            renderInstances();
            if (state.pnl) renderEquity(state.pnl);
            void refreshCharts().catch(() => {});
          },
        },
        name.slice(g.name.length + 1),
      );
      rows.push(
        el(
          'tr',
          { class: 'pair', 'data-instance': name, 'data-open-trade': String(i.openTrade) },
          el('td', {}, toggle),
          el('td', {}, el('span', { class: `badge ${i.state}`, 'data-state': i.state }, i.state)),
          el('td', { class: 'num', 'data-figure': 'exposure' }, num(i.exposure, 2)),
          el('td', { class: 'num wide-only' }, signed(i.realisedPnl, 2)),
          el('td', { class: 'num' }, signed(i.unrealisedPnl, 2)),
        ),
      );
      if (open)
        rows.push(el('tr', { class: 'pair-card' }, el('td', { colspan: '5' }, instanceCard(i, config.get(name)))));
    }
    const totals = g.totals.map((t) =>
      el(
        'tr',
        { class: 'total', 'data-quote': t.quoteAsset },
        el('th', { scope: 'row' }, `Total ${t.quoteAsset}`),
        el('td', { 'data-figure': 'running' }, `${t.running}/${t.pairs} run`),
        el('td', { class: 'num', 'data-figure': 'exposure' }, num(t.exposure, 2)),
        el('td', { class: 'num wide-only', 'data-figure': 'realised' }, signed(t.realisedPnl, 2)),
        el('td', { class: 'num', 'data-figure': 'unrealised' }, signed(t.unrealisedPnl, 2)),
      ),
    );
    const sum = (key) => String(g.totals.reduce((n, t) => n + t[key], 0));
    return el(
      'article',
      { class: 'instance group', 'data-group': g.name },
      el(
        'header',
        {},
        el('span', { class: 'name' }, g.name),
        el('span', { class: 'muted small' }, `${g.instances.length} pairs, one account`),
      ),
      el(
        'div',
        { class: 'figures' },
        figure('open trades', sum('openTrades'), 'open-trades'),
        figure('running', `${sum('running')} of ${sum('pairs')}`, 'running'),
        figure('open orders', sum('openOrders'), 'open-orders'),
        figure('fills today', sum('fillsToday'), 'fills-today'),
        // The realised PnL here too: a phone's table leaves its column out.
        ...g.totals.map((t) => figure(`realised ${t.quoteAsset}`, signed(t.realisedPnl, 2))),
      ),
      el(
        'table',
        { class: 'pairs' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            el('th', {}, 'Pair'),
            el('th', {}, 'State'),
            el('th', { class: 'num' }, 'Exposure'),
            el('th', { class: 'num wide-only' }, 'Realised'),
            el('th', { class: 'num' }, 'Open PnL'),
          ),
        ),
        el('tbody', {}, ...rows),
        el('tfoot', {}, ...totals),
      ),
    );
  }

  function figure(label, value, key) {
    return el(
      'div',
      {},
      el('span', { class: 'label' }, label),
      el('span', { class: 'value', ...(key ? { 'data-figure': key } : {}) }, value),
    );
  }

  /** The exit: at market, or a limit at a price the operator types; the answer says what was sent. */
  async function exitDialog(i) {
    $('exit-title').textContent = `Exit ${i.instance}?`;
    $('exit-text').textContent =
      `It pauses ${i.instance}, cancels its open orders and sells its position (${num(i.position.quantity)}, ` +
      'less what is below the pair’s step) through the same order path as the strategy’s orders.';
    $('exit-error').textContent = '';
    $('exit-price').value = '';
    $('exit-form').querySelector('input[value="market"]').checked = true;
    if (!(await openDialog($('exit-dialog')))) return;
    await send(`/api/v1/instances/${encodeURIComponent(i.instance)}/exit`, 'POST', orderType('exit'));
  }

  /** The order a dialog's form asks for: `{type: 'market'}`, or a limit at the price typed. */
  function orderType(form) {
    const limit = $(`${form}-form`).querySelector('input[value="limit"]').checked;
    return limit ? { type: 'limit', price: $(`${form}-price`).value.trim() } : { type: 'market' };
  }
  // Typing a price picks the limit.
  for (const form of ['exit', 'entry'])
    $(`${form}-price`).addEventListener('focus', () => {
      $(`${form}-form`).querySelector('input[value="limit"]').checked = true;
    });

  /**
   * A forced entry (Freqtrade's forcebuy): at market or a limit, spending what the operator types (blank: the
   * instance's params.quoteAmount); every brake a strategy's entry meets is checked by the daemon.
   */
  async function entryDialog(i, c) {
    const symbol = c ? c.symbol : i.symbols.join(', ');
    $('entry-title').textContent = `Force entry: ${i.instance}`;
    $('entry-text').textContent =
      `Buys ${symbol} for ${i.instance} now, through every brake its strategy’s entries meet (kill switch, ` +
      'stop-buy, protections, risk limits, balance); its declared exits take the position as they take any entry.';
    $('entry-price').value = '';
    $('entry-amount').value = '';
    $('entry-form').querySelector('input[value="market"]').checked = true;
    if (!(await openDialog($('entry-dialog')))) return;
    const amount = $('entry-amount').value.trim();
    const body = { ...orderType('entry'), ...(amount === '' ? {} : { quoteAmount: amount }) };
    await send(`/api/v1/instances/${encodeURIComponent(i.instance)}/entry`, 'POST', body);
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
      .map((b) => `${b.asset} ${num(b.free)}${b.locked === '0' ? '' : ` (+${num(b.locked)} locked)`}`);
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

  function emptyRow(body, columns, text) {
    body.append(el('tr', {}, el('td', { colspan: String(columns), class: 'muted' }, text)));
  }

  function renderFills(fills) {
    const body = $('fills').querySelector('tbody');
    body.replaceChildren();
    setTimeout(markOverflow);
    if (fills.length === 0) emptyRow(body, 6, 'No fills yet.');
    for (const f of fills)
      body.append(
        el(
          'tr',
          { 'data-fill': f.fillKey },
          el('td', {}, shortTime(f.time)),
          el('td', {}, f.instance ?? 'external'),
          el('td', { class: f.side }, f.side),
          el('td', { class: 'num' }, num(f.price)),
          el('td', { class: 'num' }, num(f.quantity)),
          el('td', { class: 'num' }, `${num(f.fee)} ${f.feeAsset ?? ''}`),
        ),
      );
  }

  function renderQuotes(quotes) {
    const body = $('quotes').querySelector('tbody');
    body.replaceChildren();
    if (quotes.length === 0) emptyRow(body, 6, 'No instance has a price yet.');
    for (const q of quotes)
      body.append(
        el(
          'tr',
          { 'data-quote': q.quoteAsset, title: `instances: ${q.instances.join(', ')}` },
          el('td', {}, q.quoteAsset),
          el('td', { class: 'num', 'data-figure': 'equity' }, q.equity === null ? '–' : num(q.equity, 2)),
          el('td', { class: 'num' }, signed(q.returnPct, 2)),
          // On a phone the realised and unrealised parts go under the PnL, where their columns would not fit.
          el(
            'td',
            { class: 'num', 'data-figure': 'pnl' },
            signed(q.pnl),
            el(
              'span',
              { class: 'parts small muted' },
              'realised ',
              signed(q.realisedPnl),
              ' · open ',
              signed(q.unrealisedPnl),
            ),
          ),
          el('td', { class: 'num wide-only' }, signed(q.realisedPnl)),
          el('td', { class: 'num wide-only' }, signed(q.unrealisedPnl)),
        ),
      );
    markOverflow();
  }

  /**
   * A table wider than its card scrolls sideways, and says so above it (a phone shows no scroll bar until it is
   * touched): nothing is cut without a hint.
   */
  function markOverflow() {
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      const over = wrap.scrollWidth > wrap.clientWidth + 1;
      wrap.dataset.overflow = String(over);
      let hint = wrap.previousElementSibling;
      if (!hint || !hint.classList.contains('scroll-hint')) {
        hint = el('div', { class: 'scroll-hint small muted' }, 'more columns: scroll the table sideways →');
        wrap.before(hint);
      }
      hint.hidden = !over;
    }
  }
  window.addEventListener('resize', markOverflow);

  function renderTrades(trades, profit) {
    const body = $('trades').querySelector('tbody');
    body.replaceChildren();
    if (trades.length === 0) emptyRow(body, 10, 'No closed trade yet.');
    for (const t of trades)
      body.append(
        el(
          'tr',
          { 'data-trade': String(t.id) },
          el('td', {}, shortTime(t.exitTime)),
          el('td', {}, t.instance),
          // A short lot closes a SELL of what was not bought (the backtest's round trips): its PnL runs the other way.
          el('td', { class: t.direction, 'data-figure': 'direction' }, t.direction),
          el('td', { class: 'num' }, num(t.quantity)),
          el('td', { class: 'num' }, num(t.entryPrice)),
          el('td', { class: 'num' }, num(t.exitPrice)),
          el('td', { class: 'num' }, signed(t.pnl), ` ${t.quoteAsset ?? ''}`),
          el('td', { class: 'num' }, signed(t.pnlPct, 2)),
          el('td', { class: 'num' }, duration(t.durationMs)),
          el('td', { class: 'muted' }, [t.entryTag, t.exitTag].map((x) => x ?? '–').join(' → ')),
        ),
      );
    markOverflow();
    $('trade-totals').textContent = profit.totals
      .map(
        (q) =>
          `${q.quoteAsset}: ${q.trades} trades, PnL ${num(q.pnl, 4)}, win rate ${q.winRatePct ?? '–'} %` +
          (q.profitFactor === null ? '' : `, profit factor ${q.profitFactor}`),
      )
      .join(' · ');
  }

  function renderProfit(profit) {
    const body = $('profit').querySelector('tbody');
    body.replaceChildren();
    setTimeout(markOverflow);
    if (profit.periods.length === 0) emptyRow(body, 6, 'No closed trade yet.');
    for (const p of profit.periods)
      body.append(
        el(
          'tr',
          { 'data-period': p.start },
          el('td', {}, p.period),
          el('td', {}, p.quoteAsset),
          el('td', { class: 'num' }, String(p.trades)),
          el('td', { class: 'num' }, p.winRatePct ?? '–'),
          el('td', { class: 'num' }, signed(p.pnl)),
          el('td', { class: 'num' }, num(p.fees)),
        ),
      );
    for (const b of $('periods').querySelectorAll('button'))
      b.classList.toggle('on', b.dataset.period === state.period);
  }

  for (const b of $('periods').querySelectorAll('button'))
    b.addEventListener('click', async () => {
      state.period = b.dataset.period;
      await refreshTrades().catch((err) => flash(`Cannot read the control API: ${err.message}`, true));
    });

  const C = window.CandleChart;
  /** The PnL chart's options (the price chart's are the candle chart's own), autosized to its box. */
  const chartOptions = () =>
    C.chartOptions({ autoSize: true, timeScale: { ...C.chartOptions().timeScale, secondsVisible: true } });

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

  const phone = () => window.matchMedia('(max-width: 600px)').matches;

  /** Empty slots the live prices may add before the chart is read again instead. */
  const MAX_NEW_SLOTS = 120;

  /** A new candle starts often on a fast replay: the chart (and its indicators) is read again at most this often. */
  const CHART_READ_MS = 10000;

  /**
   * A symbol's price chart: candles on a true time axis (one slot per bucket of its timeframe, an empty slot where
   * the daemon kept no candle) with the strategies' declared indicators, fills as entry and exit markers, and every
   * leg of the open orders: by default the price scale fits the candles, and a leg outside it is named at the edge
   * it lies beyond (above or below the chart); "all orders" stretches the scale to draw every leg as a line.
   */
  function symbolChart(symbol) {
    let chart = state.charts.get(symbol);
    if (chart) return chart;
    const box = el('div', { class: 'chart' });
    const legend = el('div', { class: 'legend small', 'data-legend': 'price' });
    const above = el('div', { class: 'edge above small', 'data-edge': 'above' });
    const below = el('div', { class: 'edge below small', 'data-edge': 'below' });
    const scaleButton = el('button', { type: 'button', class: 'small-button', 'data-scale': 'fit' }, 'Show all orders');
    const title = el(
      'h3',
      {},
      el('span', {}, symbol),
      el('span', { class: 'muted small timeframe', 'data-timeframe': '' }),
      el('span', { class: 'spacer' }),
      scaleButton,
    );
    const wrap = el('div', { class: 'symbol-chart', 'data-symbol': symbol }, title, legend, above, box, below);
    $('charts').append(wrap);
    const c = L.createChart(box, C.chartOptions({ autoSize: true }));
    chart = { symbol, chart: c, wrap, legend, above, below, box, lines: [], orderPrices: [], all: false, readAt: 0 };
    chart.handle = C.create(c);
    chart.handle.candles.applyOptions({
      // "All orders": the scale takes in every leg, however far it rests; by default it fits the candles.
      autoscaleInfoProvider: (original) => {
        const range = original();
        if (!range || !chart.all || chart.orderPrices.length === 0) return range;
        return {
          ...range,
          priceRange: {
            minValue: Math.min(range.priceRange.minValue, ...chart.orderPrices),
            maxValue: Math.max(range.priceRange.maxValue, ...chart.orderPrices),
          },
        };
      },
    });
    chart.markers = L.createSeriesMarkers(chart.handle.candles, []);
    scaleButton.addEventListener('click', () => {
      chart.all = !chart.all;
      scaleButton.dataset.scale = chart.all ? 'all' : 'fit';
      scaleButton.textContent = chart.all ? 'Fit the price' : 'Show all orders';
      scaleButton.setAttribute('aria-pressed', String(chart.all));
      renderOrders(chart);
    });
    state.charts.set(symbol, chart);
    return chart;
  }

  const LEG_STYLE = { limit: L.LineStyle.Solid, stop: L.LineStyle.Dashed, 'stop-limit': L.LineStyle.Dotted };

  /**
   * The symbols to chart: those the instances trade; of a multi-pair file's pairs, those holding a trade or an
   * order and those whose row is open (twenty charts would bury the page).
   */
  function chartSymbols() {
    const s = state.status;
    const symbols = new Set();
    for (const i of (s && s.instances) || []) {
      if (i.group === null) for (const symbol of i.symbols) symbols.add(symbol);
      else if (i.openTrade || i.openOrders.length > 0 || state.openPairs.has(i.instance))
        symbols.add(i.instance.slice(i.group.length + 1));
    }
    return [...symbols].sort();
  }

  /** Reads each symbol's chart (the timeframe that reaches back to its oldest fill shown) and draws it. */
  async function refreshCharts() {
    const symbols = chartSymbols();
    for (const [symbol, chart] of state.charts)
      if (!symbols.includes(symbol)) {
        chart.chart.remove();
        chart.wrap.remove();
        state.charts.delete(symbol);
      }
    for (const symbol of symbols) {
      const fills = state.fills.filter((f) => f.symbol === symbol);
      const oldest = Math.min(...fills.map((f) => Date.parse(f.time)));
      const since = Number.isFinite(oldest) ? `&since=${Math.floor(oldest)}` : '';
      const chart = symbolChart(symbol);
      chart.readAt = Date.now();
      try {
        const { body } = await api(`/api/v1/chart?symbol=${encodeURIComponent(symbol)}${since}`);
        chart.handle.set(body);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      }
      renderChart(chart);
    }
    if (chartSymbols().length === 0 && $('charts').childElementCount === 0)
      $('charts').append(el('p', { class: 'muted', id: 'no-prices' }, 'No prices seen yet.'));
    else $('no-prices')?.remove();
  }

  /** What goes with the candles: the timeframe, the first and last times, the markers, the orders, the legend. */
  function renderChart(chart) {
    const data = chart.handle.data;
    const filled = data ? data.candles.map((c, k) => (c === null ? -1 : k)).filter((k) => k >= 0) : [];
    const iso = (k) => (k === undefined ? '' : new Date(data.start + k * data.step).toISOString());
    chart.wrap.dataset.from = iso(filled[0]);
    chart.wrap.dataset.to = iso(filled[filled.length - 1]);
    chart.wrap.dataset.slots = String(data ? data.candles.length : 0);
    chart.wrap.dataset.empty = String(data ? data.candles.length - filled.length : 0);
    const tf = chart.wrap.querySelector('[data-timeframe]');
    tf.dataset.timeframe = data ? data.timeframe : '';
    tf.textContent = data ? ` ${data.timeframe} candles` : ' no candles yet';
    // Each oscillator's pane adds to the height, so the price keeps its own.
    const panes = data ? data.indicators.filter((i) => i.pane === 'own').length : 0;
    chart.box.style.setProperty('--chart-height', `${(phone() ? 240 : 300) + panes * (phone() ? 80 : 100)}px`);
    renderMarkers(chart);
    renderOrders(chart);
  }

  /** Each fill of the symbol marked in its candle at its price (the entries below, the exits above). */
  function renderMarkers(chart) {
    const data = chart.handle.data;
    const markers = [];
    let before = 0;
    if (data)
      for (const f of state.fills.filter((x) => x.symbol === chart.symbol)) {
        const k = C.slotOf(data, Date.parse(f.time));
        if (k < 0) {
          before++;
          continue;
        }
        const buy = f.side === 'BUY';
        markers.push({
          time: C.slotTime(data, k),
          position: buy ? 'atPriceBottom' : 'atPriceTop',
          price: Number(f.price),
          shape: buy ? 'arrowUp' : 'arrowDown',
          color: buy ? C.UP : C.DOWN,
          text: buy ? 'B' : 'S',
        });
      }
    markers.sort((a, b) => a.time - b.time);
    chart.markers.setMarkers(markers);
    chart.wrap.dataset.markers = String(markers.length);
    chart.wrap.dataset.earlierFills = String(before);
  }

  /** The price range the fitted scale shows: the candles' and the indicators drawn over them. */
  function fittedRange(data) {
    let low = Infinity;
    let high = -Infinity;
    for (const c of data.candles)
      if (c !== null) {
        low = Math.min(low, c[2]);
        high = Math.max(high, c[1]);
      }
    for (const ind of data.indicators)
      if (ind.pane === 'price')
        for (const line of ind.lines)
          for (const v of line.values)
            if (v !== null) {
              low = Math.min(low, v);
              high = Math.max(high, v);
            }
    return { low, high };
  }

  /**
   * The open orders' legs: a line across the chart for each leg in the scale's range (each order named once in the
   * legend, its legs together), and those beyond the fitted scale named at the edge they lie past.
   */
  function renderOrders(chart) {
    const s = state.status;
    const data = chart.handle.data;
    const open = s ? s.instances.flatMap((i) => i.openOrders).filter((o) => o.symbol === chart.symbol) : [];
    const series = chart.handle.candles;
    for (const line of chart.lines) series.removePriceLine(line);
    chart.lines = [];
    chart.orderPrices = [];
    const range = data && !chart.all ? fittedRange(data) : { low: -Infinity, high: Infinity };
    const shown = [];
    const aboveList = [];
    const belowList = [];
    for (const o of open) {
      const inRange = [];
      for (const leg of legs(o)) {
        const price = Number(leg.price);
        chart.orderPrices.push(price);
        const item = { o, leg, price };
        if (price > range.high) aboveList.push(item);
        else if (price < range.low) belowList.push(item);
        else inRange.push(item);
      }
      for (const { leg, price } of inRange)
        chart.lines.push(
          series.createPriceLine({
            price,
            color: o.side === 'BUY' ? C.UP : C.DOWN,
            lineWidth: 1,
            lineStyle: LEG_STYLE[leg.kind],
            axisLabelVisible: false,
            title: '',
          }),
        );
      if (inRange.length > 0) shown.push({ o, legs: inRange.map(({ leg, price }) => ({ leg, price })) });
    }
    const last = data && data.candles.length > 0 ? data.candles[data.candles.length - 1] : null;
    chart.legend.replaceChildren(
      el(
        'span',
        { class: 'last-price', 'data-last-price': last ? String(last[3]) : '' },
        `last ${last ? num(String(last[3])) : '–'}`,
      ),
      ...orderItems(shown),
      ...chart.handle
        .legend()
        .filter((l) => l.overPrice)
        .map((l) => el('span', { 'data-line': l.name }, el('i', { style: `background:${l.color}` }), l.name)),
    );
    const lastPrice = last ? last[3] : NaN;
    edgeList(chart.above, '▲ above the chart:', aboveList, lastPrice);
    edgeList(chart.below, '▼ below the chart:', belowList, lastPrice);
    chart.wrap.dataset.above = String(aboveList.length);
    chart.wrap.dataset.below = String(belowList.length);
    renderPanesLegend(chart);
  }

  /**
   * Orders named compactly: one item per order, its legs' prices together (`SELL OCO 21,000 / 19,000 / 18,800`), and
   * the plain limits of one side in one item (`BUY limit ×3 22,213.28 · 22,146.03 · 22,078.79`), with how far they
   * rest from the last price when `last` is given.
   */
  function orderItems(list, last) {
    const groups = [];
    for (const item of list) {
      const prev = groups[groups.length - 1];
      const plain = item.o.type === 'LIMIT';
      if (plain && prev && prev.plain && prev.side === item.o.side) prev.items.push(item);
      else groups.push({ plain, side: item.o.side, items: [item] });
    }
    return groups.map((g) => {
      const legsOf = g.items.flatMap((i) => i.legs);
      const prices = legsOf.map((l) => l.price);
      const far =
        last === undefined || !Number.isFinite(last)
          ? ''
          : ` (${[...new Set([Math.min(...prices), Math.max(...prices)].map((p) => distance(p, last)))].join(' to ')})`;
      const o = g.items[0].o;
      const what = g.plain
        ? `${g.side} limit${g.items.length > 1 ? ` ×${g.items.length}` : ''} `
        : `${g.side} ${o.type} `;
      return el(
        'span',
        { class: `${g.side}-leg`, 'data-order-legend': g.items.map((i) => i.o.localId).join(' ') },
        what,
        ...legsOf.flatMap(({ leg }, i) => [
          i > 0 ? (g.plain ? ' · ' : ' / ') : '',
          el('span', { 'data-leg-price': leg.price, title: leg.kind }, num(leg.price)),
        ]),
        far === '' ? '' : el('span', { class: 'muted' }, far),
      );
    });
  }

  /** Legs beyond the fitted scale, named at the edge they lie past, with how far they rest from the last price. */
  function edgeList(box, label, items, last) {
    box.hidden = items.length === 0;
    const byOrder = new Map();
    for (const { o, leg, price } of items) {
      if (!byOrder.has(o.localId)) byOrder.set(o.localId, { o, legs: [] });
      byOrder.get(o.localId).legs.push({ leg, price });
    }
    box.replaceChildren(el('span', { class: 'muted' }, label), ...orderItems([...byOrder.values()], last));
  }

  /** A leg's distance from the last price shown, in percent of it. */
  function distance(price, last) {
    if (!Number.isFinite(last) || last === 0) return '';
    const pct = ((price - last) / last) * 100;
    return `${pct > 0 ? '+' : ''}${pct.toFixed(1)} %`;
  }

  /** The oscillators' names, under the chart (each has a pane of its own). */
  function renderPanesLegend(chart) {
    let box = chart.wrap.querySelector('[data-legend="panes"]');
    const own = chart.handle.legend().filter((l) => !l.overPrice);
    if (!box) {
      box = el('div', { class: 'legend small', 'data-legend': 'panes' });
      chart.wrap.append(box);
    }
    box.hidden = own.length === 0;
    box.replaceChildren(
      el('span', { class: 'muted' }, 'panes below the price:'),
      ...own.map((l) => el('span', { 'data-line': l.name }, el('i', { style: `background:${l.color}` }), l.name)),
    );
  }

  /**
   * Prices from the live stream: the last candle follows them (a new one starts in its bucket, empty slots before it
   * where no price came), and the chart with its indicators is read again once a candle closed (at most every
   * CHART_READ_MS).
   */
  function onPrices(recent) {
    for (const [symbol, points] of Object.entries(recent)) {
      const chart = state.charts.get(symbol);
      const data = chart && chart.handle.data;
      if (!data || data.candles.length === 0) continue;
      let opened = false;
      for (const [t, price] of points) {
        const k = Math.floor((t - data.start) / data.step);
        if (k < data.candles.length - 1) continue;
        // Far past the chart's last slot (the daemon was down, the clock stepped): read the chart again instead.
        if (k - data.candles.length > MAX_NEW_SLOTS) {
          opened = true;
          break;
        }
        while (data.candles.length <= k) {
          data.candles.push(null);
          opened = true;
          if (data.candles.length <= k)
            chart.handle.candles.update({ time: C.slotTime(data, data.candles.length - 1) });
        }
        const c = data.candles[k];
        data.candles[k] =
          c === null ? [price, price, price, price] : [c[0], Math.max(c[1], price), Math.min(c[2], price), price];
        const [open, high, low, close] = data.candles[k];
        chart.handle.candles.update({ time: C.slotTime(data, k), open, high, low, close });
      }
      if (opened && Date.now() - chart.readAt > CHART_READ_MS) void refreshCharts().catch(() => {});
      else renderOrders(chart);
    }
  }

  /** The PnL of several series added at every time one of them changed, each holding its last value between. */
  function summed(series) {
    const places = Math.max(0, ...series.flatMap((points) => points.map((p) => (p.total.split('.')[1] || '').length)));
    const times = [...new Set(series.flatMap((points) => points.map((p) => p.time)))].sort((a, b) => a - b);
    const next = series.map(() => 0);
    const last = series.map(() => 0);
    return times.map((time) => {
      let total = 0;
      series.forEach((points, k) => {
        while (next[k] < points.length && points[next[k]].time <= time) last[k] = Number(points[next[k]++].total);
        total += last[k];
      });
      return { time, total: total.toFixed(places) };
    });
  }

  /**
   * The PnL lines: each single-pair file's; of a multi-pair file, its total (its pairs' PnL added; only when they
   * share one quote asset, amounts in different ones do not add) and the pairs whose row is open. Twenty lines
   * and a legend of twenty would bury the one that matters.
   */
  function equityLines(pnl) {
    const s = state.status;
    const groupOf = new Map(((s && s.instances) || []).map((i) => [i.instance, i.group]));
    const groups = new Map(((s && s.groups) || []).map((g) => [g.name, g]));
    const lines = new Map();
    const members = new Map();
    for (const [instance, points] of Object.entries(pnl.instances)) {
      const g = groups.get(groupOf.get(instance));
      if (g === undefined || g.totals.length !== 1) {
        lines.set(instance, points);
        continue;
      }
      const total = `${g.name} total`;
      if (!members.has(total)) {
        members.set(total, []);
        lines.set(total, []);
      }
      members.get(total).push(points);
      if (state.openPairs.has(instance)) lines.set(instance, points);
    }
    for (const [total, series] of members) lines.set(total, summed(series));
    return lines;
  }

  const PALETTE = ['#7e57c2', '#ef6c00', '#00897b', '#c2185b', '#3949ab', '#6d4c41'];
  function renderEquity(pnl) {
    state.pnl = pnl;
    if (!state.equity) {
      const c = L.createChart($('equity'), chartOptions());
      state.equity = { chart: c, series: new Map() };
    }
    const eq = state.equity;
    const lines = equityLines(pnl);
    for (const [name, series] of eq.series)
      if (!lines.has(name)) {
        eq.chart.removeSeries(series);
        eq.series.delete(name);
      }
    for (const [instance, points] of lines) {
      let series = eq.series.get(instance);
      if (!series) {
        // Nothing over the price scale: the names and latest values are in the legend above the chart.
        const color = PALETTE[eq.series.size % PALETTE.length];
        series = eq.chart.addSeries(L.LineSeries, {
          color,
          lineWidth: 2,
          priceLineVisible: false,
          lastValueVisible: false,
        });
        series.color = color;
        eq.series.set(instance, series);
      }
      series.setData(perSecond(points.map((p) => [p.time, Number(p.total)])));
      series.last = points.length > 0 ? points[points.length - 1].total : null;
    }
    $('equity-legend').replaceChildren(
      ...[...eq.series.entries()].map(([name, series]) =>
        el(
          'span',
          { 'data-instance': name },
          el('i', { style: `background:${series.color}` }),
          `${name} `,
          signed(series.last),
        ),
      ),
    );
    if (eq.series.size > 0) eq.chart.timeScale().fitContent();
  }

  // --- actions -------------------------------------------------------------------------------------------
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
        ? 'No instance places a new order until it is off again, not even an exit. Open orders stay.'
        : 'Instances may place orders again.',
      on ? 'Kill switch on' : 'Turn off',
      '/api/v1/kill-switch',
      'PUT',
      { on },
    );
  });

  $('stop-buy').addEventListener('click', () => {
    const on = !(state.status && state.status.stopBuy.on);
    void act(
      on ? 'Turn stop-buy on?' : 'Turn stop-buy off?',
      on
        ? 'No instance places a new BUY order until it is off again; exits and protective SELL orders still go out. Open orders stay.'
        : 'Instances may buy again.',
      on ? 'Stop-buy on' : 'Turn off',
      '/api/v1/stop-buy',
      'PUT',
      { on },
    );
  });

  // --- reading -------------------------------------------------------------------------------------------
  function applyStatus(status) {
    state.status = status;
    renderBanner();
    renderInstances();
    renderPaper();
    renderActions();
    for (const chart of state.charts.values()) renderOrders(chart);
  }

  async function refreshStatus() {
    applyStatus((await api('/api/v1/status')).body);
  }

  function renderReady(body) {
    const pill = $('ready');
    pill.className = `pill ${body.ready ? 'ok' : 'bad'}`;
    pill.textContent = body.ready ? 'ready' : 'not ready';
    pill.title =
      body.checks
        .filter((c) => !c.ok)
        .map((c) => `${c.name}: ${c.detail}`)
        .join('\n') || 'every check passes';
  }

  async function refreshReady() {
    const res = await fetch('/readyz', { cache: 'no-cache' });
    renderReady(await res.json());
  }

  /** What moves with the price: equity per quote and the PnL lines. */
  async function refreshValues() {
    const [quotes, pnl] = await Promise.all([api('/api/v1/equity'), api('/api/v1/pnl')]);
    renderQuotes(quotes.body.quotes);
    renderEquity(pnl.body);
  }

  /** What moves with a fill: the fills, the closed trades and the profit per period. */
  async function refreshTrades() {
    const [fills, trades, profit] = await Promise.all([
      api('/api/v1/fills?limit=50'),
      api('/api/v1/trades?limit=50'),
      api(`/api/v1/profit?period=${state.period}&limit=30`),
    ]);
    state.fills = fills.body.fills;
    renderFills(state.fills);
    renderTrades(trades.body.trades, profit.body);
    renderProfit(profit.body);
    await refreshCharts();
  }

  async function refreshAll() {
    try {
      if (!state.daemon) state.daemon = (await api('/api/v1/daemon')).body;
      await refreshStatus();
      renderBanner();
      await Promise.all([refreshTrades(), refreshValues(), refreshReady()]);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) flash(`Cannot read the control API: ${err.message}`, true);
    }
  }

  // --- live updates --------------------------------------------------------------------------------------
  function onEvent(event, data) {
    const body = JSON.parse(data);
    if (event === 'status') {
      applyStatus(body);
      void refreshValues().catch(() => {});
    } else if (event === 'prices') onPrices(body.recent);
    else if (event === 'fills') void refreshTrades().catch(() => {});
    else if (event === 'ready') renderReady(body);
  }

  /** Follows the live stream until it ends; throws when it cannot be opened. */
  async function follow() {
    const res = await fetch('/api/v1/stream', { headers: authHeaders(), cache: 'no-store' });
    if (res.status === 401) askToken(sessionStorage.getItem(TOKEN_KEY) ? 'That token was refused.' : '');
    if (!res.ok || !res.body) {
      const body = await res.json().catch(() => null);
      throw new ApiError(res.status, body);
    }
    state.updates = 'live';
    renderFooter();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (data.length > 0) onEvent(event, data.join('\n'));
      }
    }
  }

  /** The live stream while it can be had; polling meanwhile, the stream tried again after a growing wait. */
  async function run() {
    let retryMs = 5000;
    for (;;) {
      if (state.waitingForToken) {
        await delay(500);
        continue;
      }
      await refreshAll();
      const opened = Date.now();
      try {
        await follow();
      } catch (err) {
        state.streamProblem = err.message;
      }
      if (Date.now() - opened > 60000) retryMs = 5000;
      state.updates = 'polling';
      renderFooter();
      for (const until = Date.now() + retryMs; Date.now() < until;) {
        await delay(POLL_MS);
        if (!state.waitingForToken && document.visibilityState !== 'hidden') await refreshAll();
      }
      retryMs = Math.min(retryMs * 2, 60000);
    }
  }

  const auth = document.querySelector('meta[name="spot-bot-auth"]');
  if (auth && auth.content === 'token' && !sessionStorage.getItem(TOKEN_KEY)) askToken('');
  void run();
})();

// LinkForge live dashboard: plain JavaScript, no build step, no library.
//
// Data flow. The page takes a snapshot from the admin API (GET /api/v1/stats
// for the tenant's per-minute buckets, GET /api/v1/links for the links and
// their flushed totals), then follows the live feed (WebSocket
// /api/v1/live). A feed message carries a link's absolute count for one
// minute bucket as the sending node knows it, and the link's all-time total.
// The page keeps those per link and per bucket. A snapshot holds only
// flushed clicks (the server flushes every 30 s), so for each link
// total - snapshotTotal clicks are missing from it; they are the link's
// newest clicks, so they are attributed to its newest live buckets. The
// tenant chart is the snapshot plus, summed over links, those missing
// clicks; a link's chart is its own stats snapshot plus its missing clicks.
// After a reconnect, and every minute, the snapshot is taken again.
(() => {
  'use strict';

  const TOKEN_KEY = 'linkforge.token';
  const MINUTE = 60 * 1000;
  const WINDOW = 60; // minutes shown by the charts
  const LIST_LIMIT = 100;
  const REFRESH_EVERY = MINUTE; // catches clicks flushed since, served by other nodes
  const BACKOFF_MIN = 1000;
  const BACKOFF_MAX = 30 * 1000;
  const CLOSE_TOKEN_REVOKED = 4001; // the feed's close code for a revoked token

  const $ = (id) => document.getElementById(id);
  const fmt = new Intl.NumberFormat();
  const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

  const state = {
    token: null,
    // The WebSocket and its reconnection.
    ws: null,
    wsGen: 0, // bumped to disown the handlers of a socket we closed
    attempts: 0,
    reconnectTimer: null,
    countdownTimer: null,
    openedOnce: false,
    // Links, newest first. link: {slug, url, short_url, created_at,
    // expires_at, expired, base} where base is the flushed total at the
    // tenant snapshot (or when the page learnt of the link).
    links: new Map(),
    fetching: new Set(), // slugs being fetched after a feed message
    // Live state per slug: {buckets: Map(bucketMs -> count), total}.
    live: new Map(),
    // Tenant snapshot: {buckets: Map(bucketMs -> count), total}.
    tenant: null,
    // The selected link and its own stats snapshot.
    selected: null,
    linkStats: null, // {slug, buckets, total}
    renderQueued: false,
    refreshTimer: null,
    tickTimer: null,
    loadGen: 0,
  };

  // ---------------------------------------------------------------- API

  class APIError extends Error {
    constructor(status, problem) {
      super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
      this.status = status;
      this.fields = (problem && problem.errors) || [];
    }
  }

  async function api(method, path, body) {
    const headers = { Authorization: 'Bearer ' + state.token, Accept: 'application/json' };
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(path, init);
    let data = null;
    const type = resp.headers.get('Content-Type') || '';
    if (type.includes('json')) {
      data = await resp.json().catch(() => null);
    }
    if (resp.status === 401 && state.token) {
      signOut('The server refused this token. It may have been revoked.');
    }
    if (!resp.ok) throw new APIError(resp.status, data);
    return data;
  }

  // statsWindow asks for exactly the minutes the charts show.
  function statsQuery() {
    const to = floorMinute(Date.now()) + MINUTE;
    const from = to - WINDOW * MINUTE;
    return `from=${encodeURIComponent(new Date(from).toISOString())}&to=${encodeURIComponent(new Date(to).toISOString())}&interval=minute`;
  }

  function bucketMap(stats) {
    const m = new Map();
    for (const b of stats.buckets || []) {
      if (b.count) m.set(Date.parse(b.start), b.count);
    }
    return m;
  }

  // ---------------------------------------------------------------- snapshot

  // load takes a new snapshot: tenant stats first, then the links, so that a
  // flush landing in between makes the page undercount for a moment rather
  // than count a click twice.
  async function load() {
    const gen = ++state.loadGen;
    const stats = await api('GET', '/api/v1/stats?' + statsQuery());
    const page = await api('GET', `/api/v1/links?limit=${LIST_LIMIT}`);
    if (gen !== state.loadGen) return; // a newer load won
    state.tenant = { buckets: bucketMap(stats), total: stats.total || 0 };
    const fresh = new Map();
    for (const j of page.links || []) fresh.set(j.slug, toLink(j, state.links.get(j.slug)));
    // Links the page learnt of since (created here, or seen on the feed)
    // stay, after the listed ones if older.
    for (const [slug, l] of state.links) if (!fresh.has(slug)) fresh.set(slug, l);
    state.links = new Map([...fresh.entries()].sort((a, b) => b[1].created - a[1].created));
    if (!state.selected && state.links.size > 0) state.selected = state.links.keys().next().value;
    if (state.selected) await loadLinkStats(state.selected);
    render();
  }

  function toLink(j, prev) {
    return {
      slug: j.slug,
      url: j.url,
      short_url: j.short_url,
      created: Date.parse(j.created_at),
      expires_at: j.expires_at ? Date.parse(j.expires_at) : null,
      expired: !!j.expired_at || (prev ? prev.expired : false),
      base: j.clicks || 0,
    };
  }

  async function loadLinkStats(slug) {
    try {
      const s = await api('GET', `/api/v1/links/${encodeURIComponent(slug)}/stats?` + statsQuery());
      if (state.selected === slug) state.linkStats = { slug, buckets: bucketMap(s), total: s.total || 0 };
    } catch (err) {
      if (err.status === 404) {
        state.links.delete(slug); // deleted meanwhile
        if (state.selected === slug) { state.selected = null; state.linkStats = null; }
      } else {
        throw err;
      }
    }
  }

  // learnLink fetches a link the feed mentions but the page does not know:
  // created elsewhere, or beyond the first page of the list.
  async function learnLink(slug) {
    if (state.links.has(slug) || state.fetching.has(slug)) return;
    state.fetching.add(slug);
    try {
      const j = await api('GET', `/api/v1/links/${encodeURIComponent(slug)}`);
      if (!state.links.has(slug)) {
        state.links.set(slug, toLink(j));
        state.links = new Map([...state.links.entries()].sort((a, b) => b[1].created - a[1].created));
      }
      scheduleRender();
    } catch (err) {
      // Gone again, or a network error: the next message retries.
    } finally {
      state.fetching.delete(slug);
    }
  }

  // ---------------------------------------------------------------- live feed

  function connect() {
    clearTimeout(state.reconnectTimer);
    clearInterval(state.countdownTimer);
    const gen = ++state.wsGen;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // A browser cannot set headers on a WebSocket: the token travels as a
    // subprotocol, next to the one the server selects (API.md).
    let ws;
    try {
      ws = new WebSocket(`${proto}//${location.host}/api/v1/live`, ['linkforge.v1', 'bearer.' + state.token]);
    } catch (err) {
      scheduleReconnect(false);
      return;
    }
    state.ws = ws;
    setConn('connecting', state.openedOnce ? 'Reconnecting…' : 'Connecting…');
    let opened = false;
    ws.onopen = () => {
      if (gen !== state.wsGen) return;
      opened = true;
      state.attempts = 0;
      setConn('live', 'Live');
      // Whatever happened while we were away is in the stats API now, or
      // will be in the next messages.
      if (state.openedOnce) load().catch(showLoadError);
      state.openedOnce = true;
    };
    ws.onmessage = (ev) => {
      if (gen !== state.wsGen) return;
      let m;
      try { m = JSON.parse(ev.data); } catch (err) { return; }
      if (m.type === 'clicks') onClicks(m);
      else if (m.type === 'expired') onExpired(m);
    };
    ws.onclose = (ev) => {
      if (gen !== state.wsGen) return;
      state.ws = null;
      // 4001: the server closed the feed because the token was revoked;
      // reconnecting with it would only be refused.
      if (ev.code === CLOSE_TOKEN_REVOKED) {
        signOut('This token was revoked. Sign in with another one.');
        return;
      }
      scheduleReconnect(opened);
    };
  }

  function scheduleReconnect(wasOpen) {
    if (!state.token) return;
    if (!wasOpen && state.attempts > 0) {
      // Repeated refusals may be a revoked token: the API says so (and
      // api() signs out on 401).
      api('GET', '/api/v1/links?limit=1').catch(() => {});
    }
    const ceiling = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** state.attempts);
    const delay = Math.round(ceiling / 2 + Math.random() * ceiling / 2);
    state.attempts++;
    const at = Date.now() + delay;
    const tick = () => {
      const s = Math.max(1, Math.ceil((at - Date.now()) / 1000));
      setConn(navigator.onLine === false ? 'offline' : 'reconnecting',
        (navigator.onLine === false ? 'Offline · retrying in ' : 'Reconnecting in ') + s + ' s');
    };
    tick();
    clearInterval(state.countdownTimer);
    state.countdownTimer = setInterval(tick, 1000);
    state.reconnectTimer = setTimeout(() => {
      clearInterval(state.countdownTimer);
      connect();
    }, delay);
  }

  function setConn(kind, text) {
    const el = $('conn');
    el.dataset.state = kind;
    $('conn-text').textContent = text;
  }

  function onClicks(m) {
    if (typeof m.link !== 'string') return;
    const bucket = Date.parse(m.bucket);
    if (Number.isNaN(bucket)) return;
    let lv = state.live.get(m.link);
    if (!lv) {
      lv = { buckets: new Map(), total: null };
      state.live.set(m.link, lv);
    }
    // Absolute values: a late or repeated message must not lower them.
    lv.buckets.set(bucket, Math.max(lv.buckets.get(bucket) || 0, m.count || 0));
    if (typeof m.total === 'number') lv.total = Math.max(lv.total || 0, m.total);
    if (!state.links.has(m.link)) learnLink(m.link);
    bump(m.link);
    scheduleRender();
  }

  function onExpired(m) {
    const l = state.links.get(m.link);
    if (l) {
      l.expired = true;
      scheduleRender();
    } else {
      learnLink(m.link);
    }
  }

  // ---------------------------------------------------------------- model

  // missing returns, per bucket, the clicks of slug that a snapshot whose
  // total for the link was base does not hold: total - base, attributed to
  // the newest live buckets first.
  function missing(slug, base) {
    const out = new Map();
    const lv = state.live.get(slug);
    if (!lv || lv.total === null) return out;
    let left = lv.total - base;
    const keys = [...lv.buckets.keys()].sort((a, b) => b - a);
    for (const k of keys) {
      if (left <= 0) break;
      const n = Math.min(lv.buckets.get(k), left);
      if (n > 0) out.set(k, n);
      left -= n;
    }
    return out;
  }

  function linkTotal(l) {
    const lv = state.live.get(l.slug);
    return lv && lv.total !== null ? Math.max(lv.total, l.base) : l.base;
  }

  function floorMinute(ms) { return Math.floor(ms / MINUTE) * MINUTE; }

  // series returns the WINDOW minute buckets ending with the current one.
  function series(snapshot, extras) {
    const end = floorMinute(Date.now());
    const out = [];
    for (let i = WINDOW - 1; i >= 0; i--) {
      const t = end - i * MINUTE;
      let v = snapshot ? (snapshot.get(t) || 0) : 0;
      for (const e of extras) v += e.get(t) || 0;
      out.push({ t, v });
    }
    return out;
  }

  function tenantSeries() {
    const extras = [];
    for (const l of state.links.values()) extras.push(missing(l.slug, l.base));
    return series(state.tenant ? state.tenant.buckets : null, extras);
  }

  function linkSeries() {
    const ls = state.linkStats;
    if (!ls || ls.slug !== state.selected) return null;
    return series(ls.buckets, [missing(ls.slug, ls.total)]);
  }

  // ---------------------------------------------------------------- render

  function scheduleRender() {
    if (state.renderQueued) return;
    state.renderQueued = true;
    requestAnimationFrame(() => {
      state.renderQueued = false;
      render();
    });
  }

  function render() {
    if (!state.token) return;
    const ts = tenantSeries();
    const hour = ts.reduce((s, p) => s + p.v, 0);
    let total = state.tenant ? state.tenant.total : 0;
    for (const l of state.links.values()) total += linkTotal(l) - l.base;
    $('stat-hour').textContent = state.tenant ? fmt.format(hour) : '–';
    $('stat-total').textContent = state.tenant ? fmt.format(total) : '–';
    $('stat-links').textContent = fmt.format(state.links.size) + (state.links.size >= LIST_LIMIT ? '+' : '');
    drawChart($('chart-tenant'), ts, 'No clicks in the last hour');
    const sel = state.selected ? state.links.get(state.selected) : null;
    $('chart-link-title').textContent = sel ? '/' + sel.slug : 'Selected link';
    const lsr = linkSeries();
    drawChart($('chart-link'), lsr, sel ? (lsr ? 'No clicks of this link in the last hour' : 'Loading…') : 'Select a link to chart it');
    renderLinks();
  }

  function renderLinks() {
    const body = $('links-body');
    const rows = new Map();
    for (const tr of body.children) rows.set(tr.dataset.slug, tr);
    let prev = null;
    for (const l of state.links.values()) {
      let tr = rows.get(l.slug);
      if (tr) rows.delete(l.slug);
      else tr = newRow(l);
      updateRow(tr, l);
      // Keep the order without rebuilding rows (a rebuild would restart
      // the bump animation and lose focus).
      const want = prev ? prev.nextSibling : body.firstChild;
      if (want !== tr) body.insertBefore(tr, want);
      prev = tr;
    }
    for (const tr of rows.values()) tr.remove();
    $('links-empty').hidden = state.links.size > 0;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function newRow(l) {
    const tr = el('tr');
    tr.dataset.slug = l.slug;
    tr.tabIndex = 0;
    const link = el('td');
    link.append(el('span', 'slug', '/' + l.slug));
    const a = el('a', 'short', l.short_url);
    a.href = l.short_url;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    a.addEventListener('click', (ev) => ev.stopPropagation());
    link.append(a);
    const dest = el('td', 'dest', l.url);
    dest.title = l.url;
    const clicks = el('td', 'num clicks');
    const status = el('td');
    status.append(el('span', 'badge'));
    tr.append(link, dest, clicks, status);
    tr.addEventListener('click', () => select(l.slug));
    tr.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); select(l.slug); }
    });
    return tr;
  }

  function updateRow(tr, l) {
    const clicks = tr.querySelector('.clicks');
    const text = fmt.format(linkTotal(l));
    if (clicks.textContent !== text) clicks.textContent = text;
    tr.setAttribute('aria-selected', String(state.selected === l.slug));
    const badge = tr.querySelector('.badge');
    let cls = 'badge badge-active', label = 'active', title = '';
    if (l.expired || (l.expires_at !== null && l.expires_at <= Date.now())) {
      cls = 'badge badge-expired'; label = 'expired';
    } else if (l.expires_at !== null) {
      cls = 'badge badge-expiring'; label = 'expires'; title = 'Expires ' + dateFmt.format(l.expires_at);
    }
    if (badge.className !== cls) badge.className = cls;
    if (badge.textContent !== label) badge.textContent = label;
    badge.title = title;
  }

  // bump flashes a link's count when a message about it arrives.
  function bump(slug) {
    const tr = document.querySelector(`tr[data-slug="${CSS.escape(slug)}"] .clicks`);
    if (!tr) return;
    tr.classList.remove('bump');
    void tr.offsetWidth; // restart the animation
    tr.classList.add('bump');
  }

  function select(slug) {
    if (state.selected === slug) return;
    state.selected = slug;
    state.linkStats = null;
    render();
    loadLinkStats(slug).then(render).catch(showLoadError);
  }

  // ---------------------------------------------------------------- chart

  const SVG = 'http://www.w3.org/2000/svg';

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // niceMax rounds up to 1, 2 or 5 times a power of ten (at least 4, so
  // that a quiet hour still gets a readable axis of whole numbers).
  function niceMax(v) {
    if (v <= 4) return 4;
    const p = 10 ** Math.floor(Math.log10(v));
    for (const m of [1, 2, 4, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function drawChart(host, points, emptyText) {
    const w = Math.max(240, host.clientWidth || 600);
    const h = host.clientHeight || 190;
    const pad = { l: 34, r: 6, t: 8, b: 22 };
    const root = svg('svg', { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: 'none' });
    const iw = w - pad.l - pad.r, ih = h - pad.t - pad.b;
    const max = niceMax(points ? Math.max(...points.map((p) => p.v)) : 0);
    const grid = svg('g', { class: 'grid' });
    const axis = svg('g', { class: 'axis' });
    for (let i = 0; i <= 4; i++) {
      const y = pad.t + ih - (ih * i) / 4;
      grid.append(svg('line', { x1: pad.l, x2: w - pad.r, y1: y, y2: y }));
      axis.append(svg('text', { x: pad.l - 6, y: y + 4, 'text-anchor': 'end' }, fmt.format((max * i) / 4)));
    }
    root.append(grid, axis);
    if (points) {
      const slot = iw / points.length;
      const bw = Math.max(1, slot - Math.min(3, slot * 0.25));
      const bars = svg('g', {});
      points.forEach((p, i) => {
        const x = pad.l + i * slot + (slot - bw) / 2;
        if (p.v > 0) {
          const bh = Math.max(2, (ih * p.v) / max);
          const r = svg('rect', {
            class: i === points.length - 1 ? 'bar now' : 'bar',
            x: x.toFixed(1), y: (pad.t + ih - bh).toFixed(1), width: bw.toFixed(1), height: bh.toFixed(1), rx: Math.min(2, bw / 2),
          });
          r.append(svg('title', {}, `${timeFmt.format(p.t)} · ${fmt.format(p.v)} click${p.v === 1 ? '' : 's'}`));
          bars.append(r);
        }
        // A label every 15 minutes, and "now" under the current minute.
        const fromEnd = points.length - 1 - i;
        if (fromEnd === 0 || (fromEnd % 15 === 0 && fromEnd <= points.length - 5)) {
          axis.append(svg('text', { x: (x + bw / 2).toFixed(1), y: h - 6, 'text-anchor': fromEnd === 0 ? 'end' : 'middle' },
            fromEnd === 0 ? 'now' : timeFmt.format(p.t)));
        }
      });
      root.append(bars);
    }
    if (!points || points.every((p) => p.v === 0)) {
      root.append(svg('text', { class: 'placeholder', x: pad.l + iw / 2, y: pad.t + ih / 2, 'text-anchor': 'middle' }, emptyText));
    }
    host.replaceChildren(root);
  }

  // ---------------------------------------------------------------- forms

  function problemText(err) {
    if (!(err instanceof APIError)) return 'The server cannot be reached. Check your connection and try again.';
    const fields = err.fields.map((f) => `${f.field}: ${f.detail}`);
    return fields.length > 0 ? fields.join(' · ') : err.message;
  }

  async function onTokenSubmit(ev) {
    ev.preventDefault();
    const input = $('token');
    const token = input.value.trim();
    const errEl = $('token-error');
    errEl.hidden = true;
    if (!token) return;
    state.token = token;
    try {
      await api('GET', '/api/v1/links?limit=1');
    } catch (err) {
      state.token = null;
      errEl.textContent = err.status === 401 ? 'This token was not accepted. Check that it is complete and not revoked.' : problemText(err);
      errEl.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.select(); // the next paste replaces it
      return;
    }
    input.value = '';
    input.removeAttribute('aria-invalid');
    sessionStorage.setItem(TOKEN_KEY, token);
    start();
  }

  async function onCreateSubmit(ev) {
    ev.preventDefault();
    const form = ev.target;
    const errEl = $('create-error');
    const result = $('create-result');
    errEl.hidden = true;
    result.hidden = true;
    for (const i of form.querySelectorAll('input')) i.removeAttribute('aria-invalid');
    const body = { url: $('create-url').value.trim() };
    const slug = $('create-slug').value.trim();
    if (slug) body.slug = slug;
    const exp = $('create-expires').value;
    if (exp) body.expires_at = new Date(exp).toISOString();
    const button = $('create-submit');
    button.disabled = true;
    try {
      const j = await api('POST', '/api/v1/links', body);
      const l = toLink(j);
      state.links.set(l.slug, l);
      state.links = new Map([...state.links.entries()].sort((a, b) => b[1].created - a[1].created));
      form.reset();
      result.replaceChildren('Created ');
      const a = el('a', '', j.short_url);
      a.href = j.short_url;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      result.append(a);
      result.hidden = false;
      state.selected = null;
      select(l.slug);
    } catch (err) {
      errEl.textContent = problemText(err);
      errEl.hidden = false;
      if (err instanceof APIError) {
        for (const f of err.fields) {
          const input = form.querySelector(`[name="${CSS.escape(f.field)}"]`);
          if (input) input.setAttribute('aria-invalid', 'true');
        }
      }
    } finally {
      button.disabled = false;
    }
  }

  function showLoadError(err) {
    if (err instanceof APIError && err.status === 401) return; // signed out already
    setConn('reconnecting', 'Data may be stale');
  }

  // ---------------------------------------------------------------- session

  function start() {
    $('signin').hidden = true;
    $('app').hidden = false;
    $('session').hidden = false;
    state.openedOnce = false;
    state.attempts = 0;
    connect();
    load().catch(showLoadError);
    clearInterval(state.refreshTimer);
    state.refreshTimer = setInterval(() => {
      if (state.ws && state.ws.readyState === WebSocket.OPEN) load().catch(showLoadError);
    }, REFRESH_EVERY);
    // The charts slide with the clock even when nothing happens.
    clearInterval(state.tickTimer);
    state.tickTimer = setInterval(scheduleRender, 10 * 1000);
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    state.wsGen++;
    if (state.ws) state.ws.close(1000, 'signed out');
    state.ws = null;
    clearTimeout(state.reconnectTimer);
    clearInterval(state.countdownTimer);
    clearInterval(state.refreshTimer);
    clearInterval(state.tickTimer);
    state.links = new Map();
    state.live = new Map();
    state.tenant = null;
    state.selected = null;
    state.linkStats = null;
    $('links-body').replaceChildren();
    $('app').hidden = true;
    $('session').hidden = true;
    $('signin').hidden = false;
    const errEl = $('token-error');
    errEl.textContent = message || '';
    errEl.hidden = !message;
    $('token').focus();
  }

  function init() {
    $('token-form').addEventListener('submit', onTokenSubmit);
    $('create-form').addEventListener('submit', onCreateSubmit);
    $('signout').addEventListener('click', () => signOut());
    if (window.ResizeObserver) {
      let last = 0;
      new ResizeObserver(() => {
        const w = $('chart-tenant').clientWidth;
        if (w !== last) { last = w; scheduleRender(); }
      }).observe($('chart-tenant'));
    }
    window.addEventListener('online', () => {
      if (state.token && !state.ws) connect();
    });
    state.token = sessionStorage.getItem(TOKEN_KEY);
    if (state.token) start();
    else signOut();
  }

  init();
})();

// LinkForge dashboard: plain JavaScript, no build step, no library.
//
// Views. The overview shows the tenant: its clicks over the chosen range,
// its top links and where its clicks came from (breakdown panels), the
// create form and the links. A link's detail view shows the same chart and
// breakdowns for that link alone. The view and the range live in the
// address (/dashboard#range=24h, /dashboard/links/spring-sale#range=7d,
// #range=custom&from=...&to=...), so they can be bookmarked and shared, and
// the browser's back button goes back.
//
// Ranges. 1 h is by minute, 24 h by hour, 7 and 30 days by day (days are
// UTC days, as the stats API counts them); a custom range gets the finest
// interval that keeps the chart readable. A range that ends now is live.
//
// Live counts. The page takes a snapshot from the admin API (GET
// /api/v1/stats or /api/v1/links/{slug}/stats for the chart's buckets, GET
// /api/v1/links for the links and their flushed totals), then follows the
// live feed (WebSocket /api/v1/live). A feed message carries a link's
// absolute count for one minute bucket as the sending node knows it, and
// the link's all-time total. The page keeps those per link and per bucket.
// A snapshot holds only flushed clicks (the server flushes every 30 s), so
// for each link total - snapshotTotal clicks are missing from it; they are
// the link's newest clicks, so they are attributed to its newest live
// minutes, and those to the chart's bucket (minute, hour or day) holding
// them. After a reconnect, and every 30 s on a live range, the snapshot is
// taken again.
//
// People and Automated are live too: a feed message also carries the
// minute's absolute count of human clicks (automated = count - human),
// kept per link and minute beside the count. What a filtered view adds to
// its snapshot, per minute, is the larger of two lower bounds of the
// clicks of that traffic the snapshot lacks: (a) the view's live count of
// the traffic in the minute (summed over its links) less the snapshot's
// count of that minute, read at minute resolution (the 1 h chart itself,
// else the last 10 minutes read after the chart), exact for every minute
// the feed has followed whole; (b) per link, in each minute that the
// missing clicks above reach, the traffic's clicks beyond those the
// snapshot holds (all of them in a minute missing whole), exact for the
// minute the page connected in, where (a) lacks the clicks that came before.
// Neither counts a click twice, and the next snapshot settles what both
// miss. The filtered all-time total is the snapshot's plus the same.
//
// Breakdowns. The API counts dimensions (country, referrer, device,
// browser, OS, UTM source) per hour, and only once clicks are flushed: the
// panels are reloaded with the snapshot (on a range or view change, every
// 30 s on a live range, after a reconnect), not moved by the feed. On the
// 1 h range they cover the whole hours since the range's start, which the
// page says.
//
// Links. The table shows the server's answer to the list's filter (search,
// tag, state, sort), a page at a time ("Load more" follows the cursor); a
// refresh re-reads as many links as are shown, in one request. Links the
// page learns of otherwise (created here, the feed's link messages, a click
// on a link not listed) join the table where the sort puts them if they
// match the filter, checked here as the server would; rows already shown do
// not move, so that nothing jumps under the pointer.
//
// A link's view also manages it: copy, QR code (fetched with the token, so
// shown from a blob: URL), edit (a PATCH of the fields changed; the
// problem's field errors shown beside their fields) and delete (after an
// inline confirmation).
(() => {
  'use strict';

  const TOKEN_KEY = 'linkforge.token';
  const MINUTE = 60 * 1000;
  const HOUR = 60 * MINUTE;
  const DAY = 24 * HOUR;
  const WIDTH = { minute: MINUTE, hour: HOUR, day: DAY };
  const PAGE = 50; // links per page of the list ("Load more" fetches the next)
  const MAX_PAGE = 1000; // the API's largest page: a refresh re-reads what is shown in one request
  const SEARCH_DELAY = 250; // ms of quiet typing before the list is searched
  const QR_SIZE = 384; // px of the QR image fetched (shown at 192 CSS px: sharp on 2x screens)
  const PANEL_LIMIT = 6; // values listed per breakdown; the rest is summed
  const TOP_LINKS = 8; // links the Top links panel lists
  // Links read per snapshot of the overview's top links (the API's most):
  // the panel lists the first TOP_LINKS, the table the count of each.
  const RANKED_LINKS = 100;
  const REFRESH_EVERY = 30 * 1000; // catches flushed clicks, breakdowns and other nodes' clicks
  const LIVE_MINUTES = 10; // minutes a filtered view reads by minute: those the feed's counts may still lack flushes of
  const BACKOFF_MIN = 1000;
  const BACKOFF_MAX = 30 * 1000;
  const CLOSE_TOKEN_REVOKED = 4001; // the feed's close code for a revoked token
  const MAX_CUSTOM_SPAN = 400 * DAY;

  // The fixed ranges: n buckets of the interval, ending with the current one.
  const RANGES = {
    '1h': { interval: 'minute', n: 60, name: 'last hour' },
    '24h': { interval: 'hour', n: 24, name: 'last 24 hours' },
    '7d': { interval: 'day', n: 7, name: 'last 7 days' },
    '30d': { interval: 'day', n: 30, name: 'last 30 days' },
  };
  const DIMENSIONS = ['country', 'referrer', 'device', 'browser', 'os', 'utm_source', 'source'];

  const $ = (id) => document.getElementById(id);
  // The credential's headers, live feed and sign-out (session.js): a
  // token, or auth.SESSION in state.token when signed in by cookie.
  const auth = window.LinkForgeAuth;
  const fmt = new Intl.NumberFormat();
  const pctFmt = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 0 });
  const timeFmt = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
  const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const localDayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
  const shortFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
  // The link options (link-options.js, loaded first): the domain picker,
  // the People/Automated/All switch, the routing editor.
  const ext = window.LinkForgeOptions || null;
  let regionNames = null;
  try { regionNames = new Intl.DisplayNames(undefined, { type: 'region' }); } catch (err) { /* names stay codes */ }

  const state = {
    token: null,
    // The WebSocket and its reconnection.
    ws: null,
    wsGen: 0, // bumped to disown the handlers of a socket we closed
    attempts: 0,
    reconnectTimer: null,
    countdownTimer: null,
    openedOnce: false,
    // What is shown: the overview (slug null) or one link, over a range
    // ('1h', '24h', '7d', '30d' or 'custom' with from and to in ms).
    view: { slug: null, range: '1h', from: null, to: null },
    // Links, newest first. link: {slug, url, short_url, created_at,
    // expires_at, expired, base} where base is the flushed total at the
    // snapshot (or when the page learnt of the link).
    links: new Map(),
    fetching: new Set(), // slugs being fetched after a feed message
    missingLink: null, // the detail view's slug when the server has no such link
    missingWhy: '', // 'not found', or 'deleted' when the page saw it go
    // Live state per slug: {buckets: Map(minuteMs -> count), split:
    // Map(minuteMs -> {count, human}), total}. split comes from the
    // messages that carry human (an older node's do not): its count is
    // the one its human count is of.
    live: new Map(),
    // Chart snapshot of the view: {key, traffic, buckets: Map(bucketMs ->
    // count), total, all, minutes, minFrom} where total is the all-time
    // flushed total of the tenant or link under the traffic it was taken
    // under (all: of every click), key names the view it was taken for,
    // and minutes holds the traffic's counts by minute from minFrom (null:
    // none read).
    snap: null,
    // Breakdowns of the view: {key, dims: {dimension|'links': {data} or
    // {error}}, from, to}.
    panels: null,
    renderQueued: false,
    refreshTimer: null,
    tickTimer: null,
    loadGen: 0,
    // The links table: the slugs shown, in order (the server's order for
    // the filter, links learnt of since inserted where the sort puts them),
    // and where the next page starts.
    filter: { q: '', tag: '', state: 'all', sort: '-created' },
    list: { slugs: [], cursor: null, gen: 0, busy: 0 },
    searchTimer: null,
    tagsTimer: null,
    tagsLoaded: false, // the tag filter holds the tenant's tags
    usageGen: 0, // bumped per read of the tenant's usage: the newest wins
    usageTimer: null,
    // The detail view's management cards: the QR code's object URL and
    // the slug it is of; editDirty while the edit form has unsaved input.
    qr: { slug: null, url: null },
    // A renamed link's old slugs, by slug: only the answers about one link
    // (GET, PATCH) name them, not the list.
    aliases: new Map(),
    editDirty: false,
    // Bumped by each write made here (create, save, an old slug removed):
    // a load that left before it answers with the links as they were.
    wrote: 0,
  };

  // ---------------------------------------------------------------- API

  class APIError extends Error {
    constructor(status, problem) {
      super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
      this.status = status;
      this.fields = (problem && problem.errors) || [];
    }
  }

  // api calls the admin API; meta, when given, gets the answer's status.
  async function api(method, path, body, meta) {
    const headers = Object.assign(auth.headers(state.token, method), { Accept: 'application/json' });
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(path, init);
    if (meta) meta.status = resp.status;
    let data = null;
    const type = resp.headers.get('Content-Type') || '';
    if (type.includes('json')) {
      data = await resp.json().catch(() => null);
    }
    if (resp.status === 401 && state.token) {
      signOut(auth.ended(state.token, 'The server refused this token. It may have been revoked.'));
    }
    if (!resp.ok) throw new APIError(resp.status, data);
    return data;
  }

  // domainParam is the query parameter that addresses the link of slug on
  // its domain (links on other domains than the tenant's default need it),
  // as '&domain=...'; '' while the page does not know the link.
  function domainParam(slug) {
    const l = slug ? state.links.get(slug) : null;
    const d = l && l.domain ? l.domain : (slug && slug === state.view.slug ? state.view.domain : null);
    return d ? '&domain=' + encodeURIComponent(d) : '';
  }

  // viewDomain is the domain a link's view names in its address: none for
  // a link on the tenant's default domain (the API's default).
  function viewDomain(slug) {
    const l = state.links.get(slug);
    return l && l.domain && ext && !ext.isDefaultDomain(l.domain) ? l.domain : null;
  }

  // linkURL is the API path of the link of slug, on its domain.
  function linkURL(slug) {
    const d = domainParam(slug);
    return `/api/v1/links/${encodeURIComponent(slug)}` + (d ? '?' + d.slice(1) : '');
  }

  // ---------------------------------------------------------------- ranges

  function floorTo(ms, width) { return Math.floor(ms / width) * width; }
  function ceilTo(ms, width) { return Math.ceil(ms / width) * width; }

  // customInterval picks the finest interval that keeps a custom range's
  // chart under about 200 bars.
  function customInterval(span) {
    if (span <= 3 * HOUR) return 'minute';
    if (span <= 8 * DAY) return 'hour';
    return 'day';
  }

  // currentRange returns the view's range now: {key, interval, width, from,
  // to, n, live}. Fixed ranges slide with the clock.
  function currentRange(view = state.view) {
    const now = Date.now();
    const fixed = RANGES[view.range];
    if (fixed) {
      const width = WIDTH[fixed.interval];
      const to = floorTo(now, width) + width;
      return { key: view.range, interval: fixed.interval, width, from: to - fixed.n * width, to, n: fixed.n, live: true };
    }
    const interval = customInterval(view.to - view.from);
    const width = WIDTH[interval];
    const from = floorTo(view.from, width); // as the server aligns it
    return { key: 'custom', interval, width, from, to: view.to, n: Math.ceil((view.to - from) / width), live: view.to > now };
  }

  function rangeName(r) {
    if (r.key !== 'custom') return RANGES[r.key].name;
    return shortFmt.format(state.view.from) + ' – ' + shortFmt.format(state.view.to);
  }

  // panelRange is the range of the breakdowns: whole hours, the unit the
  // API counts dimensions in, covering the chart's range.
  function panelRange(r) {
    return { from: floorTo(r.from, HOUR), to: ceilTo(r.to, HOUR) };
  }

  function iso(ms) { return new Date(ms).toISOString(); }

  function rangeQuery(from, to) {
    return `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}`;
  }

  function bucketMap(stats) {
    const m = new Map();
    for (const b of stats.buckets || []) {
      const n = ext ? ext.count(b, 'count') : b.count;
      if (n) m.set(Date.parse(b.start), n);
    }
    return m;
  }

  function viewKey(view = state.view) {
    return [view.slug || '', view.range, view.from || '', view.to || '', view.domain || ''].join('|');
  }

  // ---------------------------------------------------------------- address

  // A link's page has an address of its own, /dashboard/links/{slug}
  // (?domain= when the slug is on another domain), and the range lives in
  // the fragment (#range=7d, #range=custom&from=...&to=...): both can be
  // bookmarked and shared, and the back button goes back. The overview is
  // the page the tab opened on (/dashboard, links first, or
  // /dashboard/analytics). An older address (/dashboard#link=slug) is
  // rewritten to the link's page.
  const LINK_PATH = '/dashboard/links/';
  const home = location.pathname.startsWith(LINK_PATH) ? '/dashboard' : location.pathname;

  function parseLocation() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    let slug = null;
    let domain = null;
    if (p.get('link')) {
      slug = p.get('link');
      domain = p.get('domain');
    } else if (location.pathname.startsWith(LINK_PATH)) {
      try { slug = decodeURIComponent(location.pathname.slice(LINK_PATH.length)) || null; } catch (err) { slug = null; }
      domain = new URLSearchParams(location.search).get('domain');
    }
    const view = { slug, range: p.get('range') || '1h', from: null, to: null, domain: (slug && domain) || null };
    if (view.range === 'custom') {
      view.from = Date.parse(p.get('from') || '');
      view.to = Date.parse(p.get('to') || '');
      if (Number.isNaN(view.from) || Number.isNaN(view.to) || view.from >= view.to || view.to - view.from > MAX_CUSTOM_SPAN) {
        view.range = '1h';
        view.from = view.to = null;
      }
    } else if (!RANGES[view.range]) {
      view.range = '1h';
    }
    return view;
  }

  function hrefOf(view) {
    const p = new URLSearchParams();
    p.set('range', view.range);
    if (view.range === 'custom') {
      p.set('from', iso(view.from));
      p.set('to', iso(view.to));
    }
    let path = home;
    if (view.slug) {
      path = LINK_PATH + encodeURIComponent(view.slug);
      if (view.domain) path += '?domain=' + encodeURIComponent(view.domain);
    }
    return path + '#' + p.toString();
  }

  // legacyAddress reports an older link address (#link=slug), which
  // parseLocation reads and the page then rewrites.
  function legacyAddress() { return new URLSearchParams(location.hash.replace(/^#/, '')).has('link'); }

  function here() { return location.pathname + location.search + location.hash; }

  // navigate shows another view or range.
  function navigate(change) {
    const view = Object.assign({}, state.view, change);
    if (view.range !== 'custom') { view.from = null; view.to = null; }
    const h = hrefOf(view);
    if (here() === h) {
      refresh(); // the same view again: a way to reload it
      return;
    }
    history.pushState(null, '', h);
    onLocationChange();
  }

  // onNavClick keeps a click on an address of this page (a link's page,
  // the overview) in the page: no reload, no new WebSocket.
  function onNavClick(ev) {
    const a = ev.target.closest && ev.target.closest('a[href]');
    if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey || a.target) return;
    if (a.origin !== location.origin || !(a.pathname.startsWith(LINK_PATH) || a.pathname === home)) return;
    ev.preventDefault();
    const h = a.pathname + a.search + a.hash;
    if (h !== here()) history.pushState(null, '', h);
    onLocationChange();
  }

  function onLocationChange() {
    if (!state.token) return;
    const view = parseLocation();
    if (legacyAddress()) history.replaceState(null, '', hrefOf(view));
    if (viewKey(view) === viewKey()) return;
    const linkChanged = view.slug !== state.view.slug;
    state.view = view;
    state.snap = null;
    state.panels = null;
    state.missingLink = null;
    syncControls();
    render();
    renderPanels();
    if (linkChanged) window.scrollTo(0, 0);
    refresh();
  }

  function refresh() {
    load().catch(showLoadError);
  }

  // ---------------------------------------------------------------- snapshot

  // load takes a new snapshot of the view: its stats first, then the links,
  // so that a flush landing in between makes the page undercount for a
  // moment rather than count a click twice; then the breakdowns.
  //
  // A link's view reads the link first: a slug that names none is shown
  // as not found after that one request. Read before the stats, the link's
  // total can only be older than the snapshot's (an undercount, as above).
  async function load() {
    const gen = ++state.loadGen;
    const wrote = state.wrote;
    const view = state.view;
    const key = viewKey(view);
    const r = currentRange(view);
    const q = rangeQuery(r.from, r.to) + '&interval=' + r.interval;
    if (!view.slug) {
      // The tag filter and the usage card are the overview's.
      loadUsage();
      if (!state.tagsLoaded) loadTags();
      if (ext) ext.overview();
    }
    let one = null;
    if (view.slug) {
      try {
        one = await api('GET', linkURL(view.slug));
      } catch (err) {
        if (err.status !== 404) throw err;
        if (gen === state.loadGen) showMissing(view.slug, 'not found');
        return;
      }
      if (gen !== state.loadGen) return;
    }
    const panels = loadPanels(view, r); // in parallel: they do not mix with the live counts
    let stats = null;
    try {
      stats = await api('GET', (view.slug ? `/api/v1/links/${encodeURIComponent(view.slug)}/stats?` : '/api/v1/stats?') + q + domainParam(view.slug));
    } catch (err) {
      if (!(view.slug && err.status === 404)) throw err;
    }
    // The list as shown, in one request: as many links as the table holds
    // (a refresh must not drop the pages loaded with "Load more").
    // A filter's or "Load more"'s read under way is newer than this one
    // and shows itself: replaced, its page would be lost (and its button
    // left disabled).
    const listGen = state.list.busy ? null : ++state.list.gen;
    const limit = Math.min(MAX_PAGE, Math.max(PAGE, state.list.slugs.length));
    const traffic = ext ? ext.traffic() : '';
    const minutes = stats ? loadMinutes(view, r, stats, traffic) : null;
    const page = await api('GET', listPath(null, limit));
    const mins = await minutes;
    if (gen !== state.loadGen) return; // a newer load won
    if (wrote !== state.wrote) {
      // A write made here meanwhile is newer than this snapshot's links:
      // shown, they would put the saved form back as it was, or drop a
      // link just created from the list. The view is read again instead.
      refresh();
      return;
    }
    if (one) {
      state.links.set(one.slug, toLink(one, state.links.get(one.slug), true));
      state.aliases.set(one.slug, one.aliases || []);
    }
    for (const j of page.links || []) state.links.set(j.slug, toLink(j, state.links.get(j.slug), true));
    if (listGen !== null && listGen === state.list.gen) applyPage(page, false);
    if (!stats) {
      showMissing(view.slug, 'deleted'); // between the two reads
      return;
    }
    // Day buckets carry unique visitors (schema Stats, unique); over
    // several days the figure is the sum of the daily ones.
    let unique = null;
    for (const b of stats.buckets || []) if (typeof b.unique === 'number') unique = (unique || 0) + b.unique;
    state.snap = { key, traffic, buckets: bucketMap(stats), total: ext ? ext.count(stats, 'total') : (stats.total || 0), all: stats.total || 0,
      unique, minutes: mins ? mins.minutes : null, minFrom: mins ? mins.from : 0 };
    state.missingLink = null;
    render();
    await panels;
  }

  // loadMinutes returns the traffic's counts by minute that a filtered
  // view compares the feed's with, and the minute they start at: the
  // chart's own buckets when they are minutes, else the last 10 minutes,
  // read after the chart so that a flush in between lowers what the feed
  // adds rather than count a click twice. Null under All, or when the
  // read fails (the feed then adds only what the per-link bound finds).
  async function loadMinutes(view, r, stats, traffic) {
    if (!traffic) return null;
    if (r.interval === 'minute') return { minutes: bucketMap(stats), from: r.from };
    const to = floorTo(Date.now(), MINUTE) + MINUTE;
    const from = to - LIVE_MINUTES * MINUTE;
    try {
      const st = await api('GET', (view.slug ? `/api/v1/links/${encodeURIComponent(view.slug)}/stats?` : '/api/v1/stats?') +
        rangeQuery(from, to) + '&interval=minute' + domainParam(view.slug));
      return { minutes: bucketMap(st), from };
    } catch (err) {
      return null;
    }
  }

  // showMissing shows the link's view as that of no link: deleted (the
  // page saw it go) or not found (the server has none under the slug).
  function showMissing(slug, why) {
    state.snap = null;
    state.panels = null;
    state.missingLink = slug;
    state.missingWhy = why;
    state.links.delete(slug);
    unlistLink(slug);
    render();
    renderPanels();
  }

  // toLink reads a link of the API. base is the link's flushed total when
  // the chart's snapshot was taken: a snapshot read (snapshot true) sets
  // it, other reads keep the one the page has, so that the live clicks the
  // snapshot lacks are not lost; seen is the newest flushed total read.
  function toLink(j, prev, snapshot) {
    const d = j.device_urls || {};
    const clicks = j.clicks || 0;
    return {
      slug: j.slug,
      url: j.url,
      title: j.title || '',
      short_url: j.short_url,
      created: Date.parse(j.created_at),
      updated: j.updated_at || '',
      expires_at: j.expires_at ? Date.parse(j.expires_at) : null,
      // The expiry alarm's message marks a link expired until it changes.
      expired: !!j.expired_at || (prev ? prev.expired && prev.updated === (j.updated_at || '') : false),
      max_clicks: typeof j.max_clicks === 'number' ? j.max_clicks : null,
      fallback_url: j.fallback_url || '',
      tags: Array.isArray(j.tags) ? j.tags : [],
      password_protected: !!j.password_protected,
      device_urls: { ios: d.ios || '', android: d.android || '', desktop: d.desktop || '' },
      domain: j.domain || '',
      routing: { redirect_status: j.redirect_status || 302, forward_query: !!j.forward_query, rules: j.rules || [], variants: j.variants || [], og: j.og || null, utm: j.utm || null },
      base: prev && !snapshot ? prev.base : clicks,
      seen: Math.max(clicks, prev && !snapshot ? prev.seen : 0),
      // Of clicks (and of the stats' totals), what an import brought: the
      // feed's totals count only the clicks made here.
      imported: j.imported_clicks || 0,
      // active, disabled (by the tenant) or blocked (by the operator).
      state: j.state || 'active',
      blocked_reason: j.blocked_reason || '',
      unsafe_reason: j.unsafe_reason || '',
      health: j.health || null,
      notes: j.notes || '',
      archived: !!j.archived,
      valid_since: j.valid_since ? Date.parse(j.valid_since) : null,
    };
  }

  // ---------------------------------------------------------------- list

  // listPath is the links request for the filter: from cursor, limit links.
  function listPath(cursor, limit) {
    const p = new URLSearchParams();
    const f = state.filter;
    if (f.q) p.set('q', f.q);
    if (f.tag) p.append('tag', f.tag);
    if (f.state !== 'all') p.set('state', f.state);
    if (f.sort !== '-created') p.set('sort', f.sort);
    p.set('limit', String(limit));
    if (cursor) p.set('cursor', cursor);
    return '/api/v1/links?' + p.toString();
  }

  function filtered() {
    const f = state.filter;
    return !!(f.q || f.tag || f.state !== 'all');
  }

  // applyPage shows a page of the list: the first (more false) replaces
  // the table, a next one is appended.
  function applyPage(page, more) {
    const slugs = more ? state.list.slugs.slice() : [];
    const seen = new Set(slugs);
    for (const j of page.links || []) {
      if (!state.links.has(j.slug)) state.links.set(j.slug, toLink(j));
      if (!seen.has(j.slug)) { seen.add(j.slug); slugs.push(j.slug); }
    }
    state.list.slugs = slugs;
    state.list.cursor = page.next_cursor || null;
    state.list.loaded = true;
  }

  // loadList reads the list again for a new filter (more false) or its
  // next page.
  async function loadList(more) {
    const gen = ++state.list.gen;
    state.list.busy = gen;
    const errEl = $('links-error');
    const button = $('links-more');
    button.disabled = true;
    $('links-body').setAttribute('aria-busy', 'true');
    try {
      const page = await api('GET', listPath(more ? state.list.cursor : null, PAGE));
      if (gen !== state.list.gen) return; // a newer filter won
      for (const j of page.links || []) state.links.set(j.slug, toLink(j, state.links.get(j.slug)));
      applyPage(page, more);
      errEl.hidden = true;
    } catch (err) {
      if (gen !== state.list.gen) return;
      errEl.textContent = 'Could not load the links: ' + problemText(err);
      errEl.hidden = false;
    } finally {
      if (gen === state.list.gen) {
        button.disabled = false;
        $('links-body').removeAttribute('aria-busy');
      }
      if (state.list.busy === gen) state.list.busy = 0;
    }
    render();
  }

  // matches says whether a link belongs in the list of the filter, as the
  // server decides it (for links learnt of from the feed).
  function matches(l) {
    const f = state.filter;
    if (f.q) {
      const q = f.q.toLowerCase();
      if (![l.slug, l.url, l.title, l.notes].some((x) => x && x.toLowerCase().includes(q))) return false;
    }
    // The list is the default listing's: archived links are left out.
    if (l.archived) return false;
    if (f.tag && !l.tags.includes(f.tag)) return false;
    if (f.state === 'disabled' || f.state === 'blocked') return l.state === f.state;
    if (f.state === 'active' && l.state !== 'active') return false;
    if (f.state !== 'all' && linkStatus(l).ended !== (f.state === 'expired')) return false;
    return true;
  }

  // before says whether link a comes before b in the list's sort.
  function before(a, b) {
    switch (state.filter.sort) {
      case 'created': return a.created < b.created;
      case '-clicks': return linkTotal(a) > linkTotal(b);
      case 'clicks': return linkTotal(a) < linkTotal(b);
      case 'slug': return a.slug < b.slug;
      default: return a.created > b.created;
    }
  }

  // listLink puts a link the page learnt of (created here or elsewhere,
  // changed, or clicked) in the list where the sort puts it, or takes it
  // out when it no longer matches the filter. A link that would sort past
  // the last row shown waits for "Load more".
  function listLink(l) {
    const slugs = state.list.slugs;
    const i = slugs.indexOf(l.slug);
    if (!matches(l)) {
      if (i >= 0) slugs.splice(i, 1);
      return;
    }
    if (i >= 0) return; // stays where it is: rows do not jump under the pointer
    let at = slugs.findIndex((s) => state.links.has(s) && before(l, state.links.get(s)));
    if (at < 0) {
      if (state.list.cursor) return;
      at = slugs.length;
    }
    slugs.splice(at, 0, l.slug);
  }

  function unlistLink(slug) {
    const i = state.list.slugs.indexOf(slug);
    if (i >= 0) state.list.slugs.splice(i, 1);
  }

  // loadTags fills the tag filter with the tenant's tags.
  async function loadTags() {
    let data;
    try {
      data = await api('GET', '/api/v1/tags');
    } catch (err) {
      return; // the filter keeps its options
    }
    const sel = $('links-tag');
    const keep = state.filter.tag;
    const opts = [new Option('All tags', '')];
    for (const t of data.tags || []) opts.push(new Option(`${t.tag} (${fmt.format(t.links)})`, t.tag));
    if (keep && !opts.some((o) => o.value === keep)) opts.push(new Option(keep + ' (0)', keep));
    sel.replaceChildren(...opts);
    sel.value = keep;
    state.tagsLoaded = true;
  }

  // tagsChanged reloads the tag filter soon: once for a burst of changes.
  function tagsChanged() {
    clearTimeout(state.tagsTimer);
    state.tagsTimer = setTimeout(loadTags, 500);
  }

  // loadUsage shows the tenant's quotas and what it uses of them (GET
  // /api/v1/tenant): with the overview's snapshot, after a create here,
  // and soon after links come and go elsewhere.
  async function loadUsage() {
    const gen = ++state.usageGen;
    let u;
    try {
      u = await api('GET', '/api/v1/tenant');
    } catch (err) {
      if (gen === state.usageGen) $('usage').hidden = true; // an older server, or none to show
      return;
    }
    if (gen !== state.usageGen || !state.token) return;
    $('usage').hidden = false;
    $('usage-tenant').textContent = u.name || '';
    const links = usageRow('links', u.links, u.max_links);
    const clicks = usageRow('clicks', u.clicks_this_month, u.max_clicks_per_month);
    const note = $('usage-note');
    const notes = [];
    if (links.full) notes.push('The link limit is reached: new links are refused until some are deleted or the limit is raised.');
    if (clicks.full) notes.push('Over the monthly click quota: links still redirect, and clicks are still counted.');
    note.textContent = notes.join(' ');
    note.hidden = notes.length === 0;
  }

  // usageRow writes one quota's use: "3 of 5" with a meter, or "3 · no
  // limit"; full says the use has reached the limit.
  function usageRow(name, used, max) {
    const row = document.querySelector(`.usage-row[data-quota="${name}"]`);
    const value = row.querySelector('.usage-value');
    const meter = row.querySelector('.meter');
    const limited = typeof max === 'number';
    value.textContent = limited ? `${fmt.format(used)} of ${fmt.format(max)}` : `${fmt.format(used)} · no limit`;
    meter.hidden = !limited;
    const full = limited && used >= max;
    row.dataset.level = !limited ? 'none' : full ? 'full' : used >= 0.8 * max ? 'high' : 'ok';
    if (limited) {
      meter.querySelector('.meter-fill').style.width = (max > 0 ? Math.min(100, (100 * used) / max) : 100).toFixed(2) + '%';
    }
    return { full };
  }

  function usageChanged() {
    clearTimeout(state.usageTimer);
    if (!state.view.slug) state.usageTimer = setTimeout(loadUsage, 500);
  }

  function onFilterChange() {
    state.filter = {
      q: $('links-q').value.trim(),
      tag: $('links-tag').value,
      state: $('links-state').value,
      sort: $('links-sort').value,
    };
    loadList(false);
  }

  // loadPanels fetches the view's breakdowns and, on the overview, its top
  // links. A panel whose request fails says so; the others still show.
  async function loadPanels(view, r) {
    const key = viewKey(view);
    const pr = panelRange(r);
    const q = rangeQuery(pr.from, pr.to) + (ext ? ext.trafficQuery() : '') + domainParam(view.slug);
    const base = view.slug ? `/api/v1/links/${encodeURIComponent(view.slug)}/stats/` : '/api/v1/stats/';
    const names = view.slug ? [...DIMENSIONS, 'variant'] : ['links', ...DIMENSIONS];
    const results = await Promise.allSettled(names.map((d) => d === 'links'
      ? api('GET', `/api/v1/stats/links?${q}&limit=${RANKED_LINKS}`)
      : api('GET', `${base}${d}?${q}&limit=${PANEL_LIMIT}`)));
    if (viewKey() !== key || !state.token) return; // the view changed meanwhile
    const dims = {};
    names.forEach((d, i) => {
      dims[d] = results[i].status === 'fulfilled' ? { data: results[i].value } : { error: results[i].reason };
    });
    // The ranked links by "slug domain" (and by slug alone), for the
    // table's counts (rangeCount).
    const ranked = new Map();
    const top = dims.links && dims.links.data ? dims.links.data.links || [] : [];
    for (const y of top) {
      ranked.set(y.slug + ' ' + y.domain, y);
      if (!ranked.has(y.slug)) ranked.set(y.slug, y);
    }
    state.panels = { key, dims, ranked, from: pr.from, to: pr.to, live: r.live, traffic: ext ? ext.traffic() : '' };
    renderPanels();
    renderLinks(); // the table's counts are the top links' (rangeCount)
    if (view.slug) scheduleRender(); // the A/B panel shows if the range had variants
    if (ext) ext.campaigns(view.slug ? null : rangeQuery(pr.from, pr.to) + ext.trafficQuery());
  }

  // learnLink fetches a link the feed mentions but the page does not know:
  // created elsewhere, or beyond the first page of the list.
  async function learnLink(slug) {
    if (state.links.has(slug) || state.fetching.has(slug)) return;
    state.fetching.add(slug);
    try {
      const j = await api('GET', `/api/v1/links/${encodeURIComponent(slug)}`);
      if (!state.links.has(slug)) {
        const l = toLink(j);
        state.links.set(slug, l);
        listLink(l);
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
    // A browser cannot set headers on a WebSocket: the token travels as a
    // subprotocol, next to the one the server selects (operation liveFeed).
    let ws;
    try {
      ws = new WebSocket(auth.liveURL(state.token), auth.liveProtocols(state.token));
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
      else if (m.type === 'link') onLink(m);
    };
    ws.onclose = (ev) => {
      if (gen !== state.wsGen) return;
      state.ws = null;
      // 4001: the server closed the feed because the token was revoked;
      // reconnecting with it would only be refused.
      if (ev.code === CLOSE_TOKEN_REVOKED) {
        signOut(auth.ended(state.token, 'This token was revoked. Sign in with another one.'));
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
    el.title = text;
    $('conn-text').textContent = text;
  }

  function onClicks(m) {
    if (typeof m.link !== 'string') return;
    const bucket = Date.parse(m.bucket);
    if (Number.isNaN(bucket)) return;
    let lv = state.live.get(m.link);
    if (!lv) {
      lv = { buckets: new Map(), split: new Map(), total: null };
      state.live.set(m.link, lv);
    }
    // Absolute values: a late or repeated message must not lower them.
    const count = m.count || 0;
    lv.buckets.set(bucket, Math.max(lv.buckets.get(bucket) || 0, count));
    if (typeof m.human === 'number') {
      // A larger count brings its human count; the same count can only
      // raise it. Without human (an older node counts the minute too), the
      // split stays as it was: the filtered views wait for the snapshot.
      const human = Math.min(Math.max(m.human, 0), count);
      const sp = lv.split.get(bucket);
      if (!sp || count > sp.count) lv.split.set(bucket, { count, human: Math.max(human, sp ? sp.human : 0) });
      else if (count === sp.count) sp.human = Math.max(sp.human, human);
    }
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

  // onLink keeps the list current when links change elsewhere (another tab,
  // the API, the CLI).
  function onLink(m) {
    const j = m.link;
    if (!j || typeof j.slug !== 'string') return;
    if (m.op === 'deleted') {
      state.links.delete(j.slug);
      unlistLink(j.slug);
      if (state.view.slug === j.slug) {
        state.missingLink = j.slug;
        state.missingWhy = 'deleted';
        state.snap = null;
      }
    } else {
      const l = toLink(j, state.links.get(j.slug)); // the snapshot's base, not a later total
      state.links.set(j.slug, l);
      listLink(l);
    }
    if (m.op !== 'updated') usageChanged();
    tagsChanged();
    scheduleRender();
  }

  // ---------------------------------------------------------------- model

  // missing returns, per minute, the clicks of slug that a snapshot whose
  // total for the link was base does not hold: total - base, attributed to
  // the newest live minutes first.
  function missing(slug, base) {
    const out = new Map();
    const lv = state.live.get(slug);
    if (!lv || lv.total === null) return out;
    let left = liveTotal(slug, lv) - base;
    const keys = [...lv.buckets.keys()].sort((a, b) => b - a);
    for (const k of keys) {
      if (left <= 0) break;
      const n = Math.min(lv.buckets.get(k), left);
      if (n > 0) out.set(k, n);
      left -= n;
    }
    return out;
  }

  // splitValue is a minute's clicks under traffic ('human' or
  // 'automated').
  function splitValue(sp, traffic) {
    return traffic === 'human' ? sp.human : sp.count - sp.human;
  }

  // trafficMissing returns, per minute, clicks of slug under traffic that
  // a snapshot whose total of every click was base for the link does not
  // hold (bound (b) above): of a minute the missing clicks reach, the
  // traffic's clicks beyond those the snapshot can hold of the minute. A
  // minute whose human count lags its count adds nothing.
  function trafficMissing(slug, base, traffic, out) {
    const lv = state.live.get(slug);
    if (!lv) return;
    for (const [k, n] of missing(slug, base)) {
      const sp = lv.split.get(k);
      if (!sp || sp.count !== lv.buckets.get(k)) continue;
      const x = splitValue(sp, traffic) - (sp.count - n);
      if (x > 0) out.set(k, (out.get(k) || 0) + x);
    }
  }

  // trafficDeltas returns, per minute, what the view's snapshot under
  // traffic lacks of the clicks the feed told: the larger of the bounds (a)
  // and (b) above, each a number of clicks the snapshot cannot hold.
  function trafficDeltas(traffic) {
    const s = state.snap;
    const out = new Map();
    if (state.view.slug) {
      trafficMissing(state.view.slug, s.all, traffic, out);
    } else {
      for (const l of state.links.values()) trafficMissing(l.slug, l.base, traffic, out);
    }
    if (!s.minutes) return out;
    const counted = new Map();
    // The links the page knows: a link deleted meanwhile no longer counts.
    for (const slug of state.view.slug ? [state.view.slug] : state.links.keys()) {
      const lv = state.live.get(slug);
      if (!lv) continue;
      for (const [k, sp] of lv.split) {
        if (k >= s.minFrom) counted.set(k, (counted.get(k) || 0) + splitValue(sp, traffic));
      }
    }
    for (const [k, n] of counted) {
      const d = n - (s.minutes.get(k) || 0);
      if (d > (out.get(k) || 0)) out.set(k, d);
    }
    return out;
  }

  // viewExtras returns the per-minute clicks the view's snapshot lacks
  // (a list of maps, summed), or null before the snapshot.
  function viewExtras() {
    const s = state.snap;
    if (!s || s.key !== viewKey()) return null;
    const traffic = ext ? ext.traffic() : '';
    // A snapshot of another traffic is replaced by the load under way.
    if (traffic !== s.traffic) return [];
    if (traffic) return [trafficDeltas(traffic)];
    const extras = [];
    if (state.view.slug) {
      extras.push(missing(state.view.slug, s.total));
    } else {
      for (const l of state.links.values()) extras.push(missing(l.slug, l.base));
    }
    return extras;
  }

  function linkTotal(l) {
    const lv = state.live.get(l.slug);
    const flushed = Math.max(l.base, l.seen || 0);
    return lv && lv.total !== null ? Math.max(liveTotal(l.slug, lv), flushed) : flushed;
  }

  // liveTotal is the feed's total of slug (lv its live state, total not
  // null) on the scale of the API's: the feed counts the clicks made here,
  // the link's clicks and the stats' totals add the imported ones.
  function liveTotal(slug, lv) {
    const l = state.links.get(slug);
    return lv.total + (l ? l.imported : 0);
  }

  // series returns the range's buckets: the snapshot's counts plus the
  // missing clicks (per minute) falling in each.
  function series(r, snapshot, extras) {
    const out = [];
    const index = new Map();
    for (let i = 0; i < r.n; i++) {
      const t = r.from + i * r.width;
      const p = { t, v: snapshot ? (snapshot.get(t) || 0) : 0 };
      index.set(t, p);
      out.push(p);
    }
    for (const e of extras) {
      for (const [minute, n] of e) {
        const p = index.get(floorTo(minute, r.width));
        if (p) p.v += n;
      }
    }
    return out;
  }

  // viewSeries is the chart of the view with extras (viewExtras), or
  // null before its snapshot.
  function viewSeries(r, extras) {
    return extras ? series(r, state.snap.buckets, extras) : null;
  }

  // filteredTotal is the view's all-time total under a traffic: the
  // snapshot's plus what the feed told since, or null under All.
  function filteredTotal(extras) {
    const s = state.snap;
    if (!(ext && ext.traffic()) || !s || s.key !== viewKey()) return null;
    let total = s.total;
    for (const e of extras || []) for (const n of e.values()) total += n;
    return total;
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
    const r = currentRange();
    const extras = viewExtras();
    const pts = viewSeries(r, extras);
    const byTraffic = filteredTotal(extras);
    const sum = pts ? pts.reduce((s, p) => s + p.v, 0) : null;
    const slug = state.view.slug;
    const l = slug ? state.links.get(slug) : null;
    // Every count in the summary says the traffic it counts (the switch).
    const trafficWord = { human: ', people', automated: ', automated' }[ext ? ext.traffic() : ''] || '';
    $('stat-range-label').textContent = 'Clicks, ' + rangeName(r) + trafficWord;
    $('stat-total-label').textContent = 'All-time clicks' + trafficWord;
    renderHidden(byTraffic, l);
    // An empty tenant sees "create your first link", not empty charts.
    document.body.dataset.empty = String(!slug && !filtered() && state.list.loaded && state.list.slugs.length === 0);
    $('stat-range').textContent = sum === null ? '–' : fmt.format(sum);
    // A link with A/B variants shows their results beside its chart.
    document.body.dataset.variants = String(!!slug && hasVariants(l));
    $('panel-variant').hidden = !(slug && hasVariants(l));
    if (slug) {
      renderDetailHead(l);
      $('stat-total').textContent = byTraffic !== null ? fmt.format(byTraffic) : l && !(ext && ext.traffic()) ? fmt.format(linkTotal(l)) : (state.snap ? fmt.format(state.snap.total) : '–');
      $('stat-third-label').textContent = 'Status';
      $('stat-links').textContent = l ? linkStatus(l).label : '–';
    } else {
      const total = byTraffic !== null ? byTraffic : allTotal(null);
      $('stat-total').textContent = state.snap ? fmt.format(total) : '–';
      $('stat-third-label').textContent = filtered() ? 'Matching links' : 'Links';
      $('stat-links').textContent = fmt.format(state.list.slugs.length) + (state.list.cursor ? '+' : '');
    }
    const per = { minute: 'minute', hour: 'hour', day: 'day' }[r.interval];
    $('chart-title').textContent = 'Clicks per ' + per;
    const uniq = r.interval === 'day' && state.snap && state.snap.unique !== null
      ? ' · ' + fmt.format(state.snap.unique) + (r.n > 1 ? ' unique visitors (sum of the daily counts)' : ' unique visitors') : '';
    $('chart-sub').textContent = (slug ? '/' + slug : 'all links') + ' · ' + rangeName(r) + uniq;
    $('chart').dataset.interval = r.interval;
    $('chart').setAttribute('aria-label', `Clicks per ${per} of ${slug ? '/' + slug : 'all links'}, ${rangeName(r)}`);
    renderLegend(r, per);
    renderMissing(!!slug && state.missingLink === slug);
    drawChart($('chart'), pts, r, pts ? 'No clicks in this range' : 'Loading…');
    $('links-clicks-head').textContent = 'Clicks, ' + rangeName(r) + trafficWord;
    if (!slug) renderPanels('links');
    renderLinks();
    renderManage(l);
  }

  // allTotal is the view's all-time count of every click, people and
  // automated: the snapshot's plus what the feed told since (l: the
  // link of a link's view), or null before the snapshot.
  function allTotal(l) {
    const s = state.snap;
    if (!s) return null;
    if (state.view.slug) return l ? Math.max(s.all, linkTotal(l)) : s.all;
    let total = s.all;
    for (const x of state.links.values()) total += linkTotal(x) - x.base;
    return total;
  }

  // renderHidden says, under People, how many automated clicks the view's
  // all-time count (byTraffic) leaves out, live ones included, with a
  // switch to show them: a first click made with curl is automated, and
  // must not look lost.
  function renderHidden(byTraffic, l) {
    const all = ext && ext.traffic() === 'human' && byTraffic !== null ? allTotal(l) : null;
    const n = all === null ? 0 : all - byTraffic;
    $('traffic-hidden').hidden = !(n > 0);
    if (n > 0) $('traffic-hidden-text').textContent = fmt.format(n) + (n === 1 ? ' automated click' : ' automated clicks') + ' hidden';
  }

  // renderMissing shows, in place of a link's numbers, that there is no
  // such link, or hides that again.
  function renderMissing(missing) {
    $('not-found').hidden = !missing;
    $('link-nav').hidden = missing || !state.view.slug;
    for (const sel of ['.stats', '.chart-row', '.panels', '.range']) {
      const e = document.querySelector(sel);
      if (e.hidden !== missing) e.hidden = missing;
    }
    if (!missing) return;
    const name = '/' + state.view.slug;
    const deleted = state.missingWhy === 'deleted';
    $('not-found-title').textContent = deleted ? 'Link deleted' : 'Link not found';
    $('not-found-text').textContent = deleted ? `The link ${name} was deleted.` : `There is no link ${name} in this tenant.`;
  }

  // hasVariants reports whether a link's page shows the A/B panel: the
  // link has variants, or had some in the range the panel counts.
  function hasVariants(l) {
    if (l && l.routing.variants.length > 0) return true;
    const p = state.panels && state.panels.key === viewKey() ? state.panels.dims.variant : null;
    return !!(p && p.data && (p.data.values || []).some((x) => x.value !== 'none'));
  }

  function renderDetailHead(l) {
    const slug = state.view.slug;
    const badge = $('head-state');
    if (l) {
      const st = linkStatus(l);
      badge.className = st.cls;
      badge.textContent = st.label;
      badge.title = st.title;
    }
    badge.hidden = !l;
    $('head-copy').hidden = !l;
    $('head-qr').hidden = !l;
    $('view-title').textContent = '/' + slug;
    const sub = $('view-sub');
    sub.hidden = false;
    if (!l) {
      sub.textContent = state.missingLink === slug ? (state.missingWhy === 'deleted' ? 'Deleted' : 'Not found') : '';
      delete sub.dataset.slug;
      return;
    }
    if (sub.dataset.slug === slug && sub.dataset.url === l.url) return;
    sub.dataset.slug = slug;
    sub.dataset.url = l.url;
    const a = el('a', 'short-link', l.short_url);
    a.href = l.short_url;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    const dest = el('span', 'dest-full', l.url);
    dest.title = l.url;
    sub.replaceChildren(a, el('span', 'arrow', ' → '), dest);
  }

  function renderLegend(r, per) {
    const items = [['bar', 'clicks per ' + per]];
    if (r.live) {
      const now = { minute: 'current minute', hour: 'current hour', day: 'today (UTC)' }[r.interval];
      items.push(['bar now', now + ' (still counting)']);
    }
    const text = items.map((i) => i[1]).join('|');
    const ul = $('legend');
    if (ul.dataset.text === text) return;
    ul.dataset.text = text;
    ul.replaceChildren(...items.map(([cls, label]) => {
      const li = el('li');
      li.append(el('span', 'swatch ' + cls), el('span', '', label));
      return li;
    }));
  }

  // linkStatus is how the link stands now. ended is what the API's
  // state=expired means: past its expiry, or at its click limit (the
  // clicks the feed brought counted, as the redirects count them).
  function linkStatus(l) {
    const s = expiryStatus(l);
    // Taken out of service: the badge says so, ended stays the expiry's.
    if (l.state === 'blocked') {
      return { cls: 'badge badge-expired', label: 'blocked', ended: s.ended, title: 'Blocked by the operator: ' + l.blocked_reason };
    }
    if (l.state === 'disabled') {
      return { cls: 'badge badge-expired', label: 'disabled', ended: s.ended,
        title: 'Disabled: visitors get 410' + (l.fallback_url ? ', or the fallback URL' : '') };
    }
    if (l.state === 'unsafe') {
      return { cls: 'badge badge-expiring', label: 'unsafe', ended: s.ended,
        title: 'Flagged unsafe (' + l.unsafe_reason + '): visitors see a warning first; a click counts when they continue' };
    }
    // A broken target (the health check) is said unless the link ended.
    if (!s.ended && l.health && l.health.state === 'broken') {
      return { cls: 'badge badge-expiring', label: 'broken', ended: false,
        title: 'The target failed its last check' + (l.health.status ? ' (HTTP ' + l.health.status + ')' : '') + (l.health.error ? ': ' + l.health.error : '') };
    }
    return s;
  }

  function expiryStatus(l) {
    if (l.expired || (l.expires_at !== null && l.expires_at <= Date.now())) {
      return { cls: 'badge badge-expired', label: 'expired', title: '', ended: true };
    }
    const total = linkTotal(l);
    if (l.max_clicks !== null && total >= l.max_clicks) {
      return { cls: 'badge badge-expired', label: 'limit reached', ended: true,
        title: `All ${fmt.format(l.max_clicks)} clicks used` + (l.fallback_url ? ': clicks go to the fallback URL' : '') };
    }
    const limit = l.max_clicks !== null ? `${fmt.format(total)} of ${fmt.format(l.max_clicks)} clicks used` : '';
    if (l.expires_at !== null) {
      return { cls: 'badge badge-expiring', label: 'expires', title: ['Expires ' + dateFmt.format(l.expires_at), limit].filter(Boolean).join('; '), ended: false };
    }
    return { cls: 'badge badge-active', label: 'active', title: limit, ended: false };
  }

  function renderLinks() {
    const body = $('links-body');
    const rows = new Map();
    for (const tr of body.children) rows.set(tr.dataset.slug, tr);
    let prev = null;
    for (const slug of state.list.slugs) {
      const l = state.links.get(slug);
      if (!l) continue;
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
    const empty = $('links-empty');
    empty.textContent = filtered() ? 'No links match.' : 'No links yet: create your first link with the form.';
    empty.hidden = body.children.length > 0;
    $('links-more').hidden = !state.list.cursor;
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
    tr.title = 'Open /' + l.slug;
    const link = el('td', 'link');
    link.append(el('span', 'slug', '/' + l.slug), el('span', 'lock'), el('span', 'row-title'));
    const a = el('a', 'short', l.short_url);
    a.href = l.short_url;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    a.addEventListener('click', (ev) => ev.stopPropagation());
    link.append(a);
    const dest = el('td', 'dest');
    const clicks = el('td', 'num clicks');
    const status = el('td');
    status.append(el('span', 'badge'));
    tr.append(link, dest, clicks, status);
    tr.addEventListener('click', () => openLink(l.slug));
    tr.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); openLink(l.slug); }
    });
    return tr;
  }

  function updateRow(tr, l) {
    // What an edit can change: the destination, title, tags, password.
    const sig = [l.url, l.title, l.tags.join('|'), l.password_protected].join('\n');
    if (tr.dataset.sig !== sig) {
      tr.dataset.sig = sig;
      const dest = tr.querySelector('.dest');
      dest.textContent = l.url;
      dest.title = l.url;
      const title = tr.querySelector('.row-title');
      title.textContent = l.title;
      title.hidden = !l.title;
      const lock = tr.querySelector('.lock');
      lock.replaceChildren(...(l.password_protected ? [icon('lock', 'lock-icon')] : []));
      lock.title = l.password_protected ? 'Password-protected' : '';
      if (l.password_protected) {
        lock.setAttribute('role', 'img');
        lock.setAttribute('aria-label', 'Password-protected');
      } else {
        lock.removeAttribute('role');
        lock.removeAttribute('aria-label');
      }
      for (const t of tr.querySelectorAll('.tag')) t.remove();
      tr.querySelector('.link').append(...l.tags.map((t) => el('span', 'tag', t)));
    }
    const clicks = tr.querySelector('.clicks');
    const n = rangeCount(l);
    const text = n === undefined ? '…' : n === null ? '–' : fmt.format(n);
    if (clicks.textContent !== text) clicks.textContent = text;
    clicks.title = n === null ? `Fewer than the ${fmt.format(RANKED_LINKS)} most clicked links' counts: not read` : '';
    const badge = tr.querySelector('.badge');
    const st = linkStatus(l);
    if (badge.className !== st.cls) badge.className = st.cls;
    if (badge.textContent !== st.label) badge.textContent = st.label;
    badge.title = st.title;
  }

  // rangeCount is a link's count in the table: its clicks in the range and
  // traffic the page shows, read with the Top links panel (the same
  // answer, so the two agree), undefined before it is read, null for a
  // link below the ranked ones.
  //
  // Both move with the feed: to the ranked count (flushed clicks) each
  // adds the link's clicks the list's snapshot lacks (linkDelta). The
  // ranking is requested before the list, so a flush landing between the
  // two makes them undercount for a moment rather than count twice.
  function rangeCount(l) {
    const p = rankedPanel();
    if (!p) return undefined;
    const x = p.ranked.get(l.slug + ' ' + l.domain) || (!l.domain && p.ranked.get(l.slug));
    if (x) return x.count + linkDelta(l, p);
    return (p.dims.links.data.links || []).length < RANKED_LINKS ? linkDelta(l, p) : null;
  }

  // topLinks is the Top links panel's list: the ranked links (d, the
  // read) and the links the feed told of since, by their rangeCount.
  function topLinks(d) {
    const ranked = d.links || [];
    if (!rankedPanel()) return ranked.slice(0, TOP_LINKS);
    const out = [];
    const seen = new Set();
    for (const y of ranked) {
      const l = state.links.get(y.slug);
      const known = l && (!l.domain || l.domain === y.domain);
      if (known) seen.add(l);
      out.push({ slug: y.slug, count: known ? rangeCount(l) : y.count });
    }
    for (const l of state.links.values()) {
      const n = seen.has(l) ? 0 : rangeCount(l);
      if (n) out.push({ slug: l.slug, count: n });
    }
    out.sort((a, b) => b.count - a.count || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    return out.slice(0, TOP_LINKS);
  }

  // topTotal is the panel's total: the read's and what the feed told since.
  function topTotal(d) {
    let total = d.total || 0;
    const p = rankedPanel();
    if (p) for (const l of state.links.values()) total += linkDelta(l, p);
    return total;
  }

  // rankedPanel is the view's top links as read, or null before them.
  function rankedPanel() {
    const p = state.panels && state.panels.key === viewKey() ? state.panels : null;
    if (!p || !p.dims.links || !p.dims.links.data) return null;
    if (p.traffic !== (ext ? ext.traffic() : '')) return null; // a read of another traffic
    return p;
  }

  // linkDelta is l's clicks the feed told since the list's snapshot, under
  // the page's traffic, in the minutes the panel p counts.
  function linkDelta(l, p) {
    const traffic = ext ? ext.traffic() : '';
    let m;
    if (traffic) {
      m = new Map();
      trafficMissing(l.slug, l.base, traffic, m);
    } else {
      m = missing(l.slug, l.base);
    }
    let n = 0;
    for (const [k, v] of m) if (k >= p.from && (p.live || k < p.to)) n += v;
    return n;
  }

  // bump flashes a link's count when a message about it arrives.
  function bump(slug) {
    const tr = document.querySelector(`tr[data-slug="${CSS.escape(slug)}"] .clicks`);
    if (!tr) return;
    tr.classList.remove('bump');
    void tr.offsetWidth; // restart the animation
    tr.classList.add('bump');
  }

  function openLink(slug) { navigate({ slug, domain: viewDomain(slug) }); }

  // syncControls shows the view's parts and marks its range.
  function syncControls() {
    const detail = !!state.view.slug;
    $('back').hidden = !detail;
    $('back').href = hrefOf(Object.assign({}, state.view, { slug: null }));
    $('not-found-back').href = $('back').href;
    if (!detail) {
      $('view-title').textContent = 'All links';
      $('view-sub').hidden = true;
      delete $('view-sub').dataset.slug;
    }
    $('work').hidden = detail;
    $('link-nav').hidden = !detail;
    $('view-actions').hidden = !detail;
    $('head-copy-status').textContent = '';
    $('manage').hidden = true; // shown once the link is read
    $('panel-links').hidden = detail;
    $('delete-confirm').hidden = true;
    $('delete-error').hidden = true;
    $('copy-status').textContent = '';
    $('edit-status').textContent = '';
    document.body.dataset.view = detail ? 'link' : 'overview';
    for (const b of $('range-seg').querySelectorAll('button')) {
      b.setAttribute('aria-pressed', String(b.dataset.range === state.view.range));
    }
    if (state.view.range === 'custom') {
      $('range-from').value = localInput(state.view.from);
      $('range-to').value = localInput(state.view.to);
      $('custom-range').hidden = false;
    } else {
      $('custom-range').hidden = true;
    }
    $('range-error').hidden = true;
    document.title = (detail ? '/' + state.view.slug : 'Dashboard') + ' · LinkForge';
  }

  // localInput formats ms for a datetime-local input (local time, minutes).
  function localInput(ms) {
    const d = new Date(ms - new Date(ms).getTimezoneOffset() * MINUTE);
    return d.toISOString().slice(0, 16);
  }

  // ---------------------------------------------------------------- panels

  const DEVICE_NAMES = { desktop: 'Desktop', mobile: 'Mobile', tablet: 'Tablet', other: 'Other' };

  // Icons are inline SVG drawn in the text's colour, not emoji: a system
  // without an emoji font would show empty boxes. Each is a list of
  // shapes on a 24 x 24 grid.
  const ICONS = {
    desktop: [['rect', { x: 3, y: 4, width: 18, height: 12, rx: 2 }], ['path', { d: 'M8 20h8M12 16v4' }]],
    mobile: [['rect', { x: 7, y: 2.5, width: 10, height: 19, rx: 2 }], ['path', { d: 'M11 18h2' }]],
    tablet: [['rect', { x: 4, y: 3, width: 16, height: 18, rx: 2 }], ['path', { d: 'M11 18h2' }]],
    other: [['circle', { cx: 12, cy: 12, r: 9 }], ['path', { d: 'M9.5 9.5a2.5 2.5 0 1 1 3.3 2.4c-.5.2-.8.7-.8 1.2v.6M12 16.5v.5' }]],
    globe: [['circle', { cx: 12, cy: 12, r: 9 }], ['path', { d: 'M3 12h18M12 3c2.5 2.5 3.5 5.5 3.5 9s-1 6.5-3.5 9c-2.5-2.5-3.5-5.5-3.5-9s1-6.5 3.5-9' }]],
    lock: [['rect', { x: 5, y: 11, width: 14, height: 10, rx: 2 }], ['path', { d: 'M8 11V8a4 4 0 0 1 8 0v3' }]],
  };

  function icon(name, cls) {
    const root = svg('svg', { class: cls, viewBox: '0 0 24 24', width: 16, height: 16, 'aria-hidden': 'true', focusable: 'false' });
    for (const [tag, attrs] of ICONS[name]) root.append(svg(tag, attrs));
    return root;
  }

  // countryBadge shows an ISO 3166-1 alpha-2 code as text (DE, US): flags
  // would need an emoji font, and a code reads the same everywhere.
  function countryBadge(code) {
    const b = el('span', 'bar-icon cc', code);
    b.setAttribute('aria-hidden', 'true'); // the name follows
    return b;
  }

  // valueLabel returns how a dimension's value reads: {icon, text}, icon
  // an element or null.
  function valueLabel(dim, v) {
    if (v === '(more)') return { icon: null, text: 'Others (past the per-hour limit)' };
    switch (dim) {
      case 'country': {
        if (/^[A-Z]{2}$/.test(v)) {
          let name = v;
          try { name = (regionNames && regionNames.of(v)) || v; } catch (err) { /* unknown to Intl */ }
          return { icon: countryBadge(v), text: name };
        }
        return { icon: icon('globe', 'bar-icon'), text: v === 'unknown' ? 'Unknown' : v };
      }
      case 'referrer': return { icon: null, text: v === 'direct' ? 'Direct (no referrer)' : v };
      case 'device': return { icon: ICONS[v] ? icon(v, 'bar-icon') : null, text: DEVICE_NAMES[v] || v };
      case 'browser':
      case 'os': return { icon: null, text: v === 'other' ? 'Other' : v };
      case 'utm_source': return { icon: null, text: v === 'none' ? '(none)' : v };
      case 'variant': {
        if (v === 'none') return { icon: null, text: 'No variant (before the test, or a rule)' };
        const l = state.links.get(state.view.slug);
        const x = l && l.routing.variants[Number(v)];
        const name = 'Variant ' + (/^[0-9]$/.test(v) ? String.fromCharCode(65 + Number(v)) : v);
        return { icon: null, text: x ? name + ' · ' + x.url.replace(/^https?:\/\//, '') : name };
      }
      case 'source': return { icon: null, text: v === 'qr' ? 'QR code scans' : v === 'link' ? 'Link' : v };
      default: return { icon: null, text: v };
    }
  }

  function share(n, total) {
    if (!total) return '';
    const f = n / total;
    return f > 0 && f < 0.01 ? '<1%' : pctFmt.format(f);
  }

  function barRow(value, label, count, total, href) {
    const li = el('li');
    li.dataset.value = value;
    const row = el(href ? 'a' : 'div', 'bar-row');
    if (href) row.href = href;
    const name = el('span', 'bar-label');
    if (label.icon) name.append(label.icon);
    name.append(el('span', 'bar-text', label.text));
    name.title = value;
    row.append(name, el('span', 'count', fmt.format(count)), el('span', 'share', share(count, total)));
    const meter = el('span', 'meter');
    const fill = el('span', 'meter-fill');
    // CSSOM, not a style attribute: allowed by the page's CSP.
    fill.style.width = (total ? Math.max(0.5, (100 * count) / total) : 0).toFixed(2) + '%';
    meter.append(fill);
    row.append(meter);
    li.append(row);
    return li;
  }

  // renderPanels draws the breakdowns (only: just that one, as the feed
  // moves the top links).
  function renderPanels(only) {
    const p = state.panels && state.panels.key === viewKey() ? state.panels : null;
    const note = $('panels-note');
    if (p) {
      const r = currentRange();
      let text = '';
      if (p.from < r.from || p.to > r.to) {
        text = `Breakdowns count whole hours: ${shortFmt.format(p.from)} – ${p.to > Date.now() ? 'now' : shortFmt.format(p.to)}.`;
      }
      if (p.live) text += (text ? ' ' : '') + 'Updated every 30 s.';
      note.textContent = text;
    } else {
      note.textContent = '';
    }
    for (const panel of document.querySelectorAll('.panel')) {
      const dim = panel.dataset.dim;
      if (only && dim !== only) continue;
      const list = panel.querySelector('.bars');
      const empty = panel.querySelector('.panel-empty');
      const totalEl = panel.querySelector('.panel-total');
      const entry = p ? p.dims[dim] : null;
      panel.dataset.state = entry ? (entry.error ? 'error' : 'ready') : 'loading';
      if (!entry) {
        list.replaceChildren();
        totalEl.textContent = '';
        empty.textContent = 'Loading…';
        empty.hidden = false;
        continue;
      }
      if (entry.error) {
        list.replaceChildren();
        totalEl.textContent = '';
        if (entry.error.status === 404) empty.textContent = 'Not available on this server.';
        else empty.textContent = 'Could not load: ' + entry.error.message;
        empty.hidden = false;
        continue;
      }
      const d = entry.data;
      let total = d.total || 0;
      const rows = [];
      if (dim === 'links') {
        // Live, as the table (rangeCount): the same counts.
        let listed = 0;
        for (const x of topLinks(d)) {
          listed += x.count;
          rows.push(barRow(x.slug, { icon: null, text: '/' + x.slug }, x.count, total, hrefOf(Object.assign({}, state.view, { slug: x.slug, domain: viewDomain(x.slug) }))));
        }
        total = topTotal(d);
        if (total - listed > 0) rows.push(barRow('(rest)', { icon: null, text: 'All other links' }, total - listed, total));
      } else {
        for (const x of d.values || []) rows.push(barRow(x.value, valueLabel(dim, x.value), x.count, total));
        if (d.rest > 0) rows.push(barRow('(rest)', { icon: null, text: 'All other values' }, d.rest, total));
      }
      for (const li of rows) if (li.dataset.value === '(rest)') li.classList.add('rest');
      list.replaceChildren(...rows);
      totalEl.textContent = total ? fmt.format(total) + (total === 1 ? ' click' : ' clicks') : '';
      empty.textContent = 'No clicks in this range.';
      empty.hidden = total > 0;
    }
  }

  // ---------------------------------------------------------------- chart

  const SVG = 'http://www.w3.org/2000/svg';

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // yTicks returns the count axis: a 1, 2 or 5 times a power of ten step,
  // at most 5 steps, and at least 4 to the top so that a quiet range still
  // gets a readable axis of whole numbers.
  function yTicks(v) {
    const target = Math.max(4, v);
    let step = 1;
    for (let p = 1; ; p *= 10) {
      const s = [1, 2, 5].map((m) => m * p).find((x) => target / x <= 5);
      if (s) { step = s; break; }
    }
    const top = Math.ceil(target / step) * step;
    const out = [];
    for (let y = 0; y <= top; y += step) out.push(y);
    return out;
  }

  // Label steps, in buckets, by interval: a label every 5, 10, 15 … minutes.
  const LABEL_STEPS = { minute: [1, 5, 10, 15, 30, 60, 120, 240, 360], hour: [1, 2, 3, 6, 12, 24, 48], day: [1, 2, 5, 7, 14, 30, 60, 90] };

  // aligned says whether the bucket at t is on a label step: in local time
  // for minutes and hours, counted from the end for days (UTC days).
  function aligned(r, t, i, step) {
    if (r.interval === 'day') return (r.n - 1 - i) % step === 0;
    const d = new Date(t);
    const m = d.getHours() * 60 + d.getMinutes();
    return r.interval === 'minute' ? m % step === 0 : d.getMinutes() === 0 && d.getHours() % step === 0;
  }

  function tickLabel(r, t) {
    if (r.interval === 'day') return dayFmt.format(t);
    const d = new Date(t);
    if (r.interval === 'hour' && d.getHours() === 0) return localDayFmt.format(t);
    return timeFmt.format(t);
  }

  function barTitle(r, t) {
    if (r.interval === 'day') return dayFmt.format(t) + ' (UTC day)';
    if (r.interval === 'hour') return shortFmt.format(t) + '–' + timeFmt.format(t + HOUR);
    return shortFmt.format(t);
  }

  function drawChart(host, points, r, emptyText) {
    const w = Math.max(240, host.clientWidth || 600);
    const h = host.clientHeight || 220;
    const ticks = yTicks(points ? Math.max(...points.map((p) => p.v)) : 0);
    const max = ticks[ticks.length - 1];
    // Room on the left for the widest count label and the axis title.
    const labelChars = Math.max(...ticks.map((v) => fmt.format(v).length));
    const pad = { l: 30 + Math.ceil(labelChars * 6.6), r: 8, t: 10, b: 40 };
    const root = svg('svg', { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: 'none' });
    const iw = w - pad.l - pad.r, ih = h - pad.t - pad.b;
    const grid = svg('g', { class: 'grid' });
    const axis = svg('g', { class: 'axis' });
    for (const v of ticks) {
      const y = pad.t + ih - (ih * v) / max;
      grid.append(svg('line', { x1: pad.l, x2: w - pad.r, y1: y, y2: y }));
      axis.append(svg('text', { x: pad.l - 8, y: y + 4, 'text-anchor': 'end' }, fmt.format(v)));
    }
    // The axes' titles: counts up the side, time along the bottom.
    axis.append(svg('text', { class: 'axis-title', x: -(pad.t + ih / 2), y: 12, transform: 'rotate(-90)', 'text-anchor': 'middle' }, 'clicks'));
    axis.append(svg('text', { class: 'axis-title x-title', x: pad.l + iw / 2, y: h - 3, 'text-anchor': 'middle' },
      r.interval === 'day' ? 'day (UTC)' : 'time (local)'));
    root.append(grid, axis);
    if (points) {
      const slot = iw / points.length;
      const gap = slot > 12 ? Math.max(2, slot * 0.22) : Math.min(3, slot * 0.25);
      const bw = Math.max(1, Math.min(slot - gap, 64));
      const maxLabels = Math.max(2, Math.floor(iw / 60));
      const step = LABEL_STEPS[r.interval].find((s) => points.length / s <= maxLabels) || Math.ceil(points.length / maxLabels);
      const bars = svg('g', {});
      const labels = svg('g', { class: 'x-labels' });
      const last = points.length - 1;
      const endX = pad.l + last * slot + slot / 2;
      points.forEach((p, i) => {
        const cx = pad.l + i * slot + slot / 2;
        const x = cx - bw / 2;
        const current = r.live && i === last;
        if (p.v > 0) {
          const bh = Math.max(2, (ih * p.v) / max);
          const rect = svg('rect', {
            class: current ? 'bar now' : 'bar',
            x: x.toFixed(1), y: (pad.t + ih - bh).toFixed(1), width: bw.toFixed(1), height: bh.toFixed(1), rx: Math.min(3, bw / 2),
          });
          rect.append(svg('title', {}, `${barTitle(r, p.t)} · ${fmt.format(p.v)} click${p.v === 1 ? '' : 's'}${current ? ' so far' : ''}`));
          bars.append(rect);
        }
        // Labels on the steps, and "now" under the current bucket of a
        // live range (the step's label nearest to it gives way).
        if (current) {
          labels.append(svg('text', { x: Math.min(cx, w - pad.r).toFixed(1), y: pad.t + ih + 16, 'text-anchor': slot > 40 ? 'middle' : 'end' },
            r.interval === 'day' ? 'today' : 'now'));
        } else if (aligned(r, p.t, i, step) && (!r.live || endX - cx > 60)) {
          labels.append(svg('text', { x: cx.toFixed(1), y: pad.t + ih + 16, 'text-anchor': 'middle' }, tickLabel(r, p.t)));
        }
      });
      axis.append(labels);
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
    // The token's role before the page shows: learnt after, a viewer saw
    // the create form and the link's settings, usable, until it came.
    await showRole();
    start();
  }

  // tagList reads a comma-separated tags field.
  function tagList(v) {
    return v.split(',').map((t) => t.trim()).filter((t) => t !== '');
  }

  function val(id) { return $(id).value.trim(); }

  // markFields marks the inputs the problem names and, where the form has
  // one, writes each field's error next to it; it returns the errors no
  // field of the form shows.
  function markFields(form, err) {
    const left = [];
    if (!(err instanceof APIError)) return left;
    for (const f of err.fields) {
      const input = form.querySelector(`[name="${CSS.escape(f.field)}"]`);
      if (input) input.setAttribute('aria-invalid', 'true');
      let slot = form.querySelector(`.field-error[data-field="${CSS.escape(f.field)}"]`);
      if (!slot && f.field.includes('.')) slot = form.querySelector(`.field-error[data-field="${CSS.escape(f.field.split('.')[0])}"]`);
      // An error in a closed group opens it.
      const group = (input || slot) && (input || slot).closest('details');
      if (group) group.open = true;
      if (slot) {
        slot.textContent = (slot.hidden ? '' : slot.textContent + ' ') + f.detail;
        slot.hidden = false;
      } else {
        left.push(`${f.field}: ${f.detail}`);
      }
    }
    return left;
  }

  function clearFields(form) {
    for (const i of form.querySelectorAll('[aria-invalid]')) i.removeAttribute('aria-invalid');
    for (const p of form.querySelectorAll('.field-error')) { p.hidden = true; p.textContent = ''; }
  }

  async function onCreateSubmit(ev) {
    ev.preventDefault();
    const form = ev.target;
    const errEl = $('create-error');
    const result = $('create-result');
    errEl.hidden = true;
    result.hidden = true;
    clearFields(form);
    const body = { url: val('create-url') };
    const slug = val('create-slug');
    if (slug) body.slug = slug;
    const exp = $('create-expires').value;
    if (exp) body.expires_at = new Date(exp).toISOString();
    // The advanced options: only those filled in.
    const title = val('create-title');
    if (title) body.title = title;
    const tags = tagList($('create-tags').value);
    if (tags.length) body.tags = tags;
    const max = $('create-max');
    if (max.value !== '') body.max_clicks = Number(max.value);
    else if (max.validity.badInput) body.max_clicks = 'not a number'; // the server names the field
    const fallback = val('create-fallback');
    if (fallback) body.fallback_url = fallback;
    const password = $('create-password').value;
    if (password) body.password = password;
    const devices = {};
    for (const k of ['ios', 'android', 'desktop']) {
      const v = val('create-' + k);
      if (v) devices[k] = v;
    }
    if (Object.keys(devices).length) body.device_urls = devices;
    if ($('create-reuse').checked) body.find_if_exists = true;
    if (ext) ext.createBody(body);
    const button = $('create-submit');
    button.disabled = true;
    try {
      const meta = {};
      const j = await api('POST', '/api/v1/links', body, meta);
      state.wrote++;
      // 200: find_if_exists found the tenant's link of this URL.
      const found = meta.status === 200;
      const l = toLink(j, state.links.get(j.slug));
      state.links.set(l.slug, l);
      listLink(l);
      form.reset();
      result.replaceChildren(found ? 'This URL already has a link: ' : 'Created ');
      const a = el('a', '', j.short_url);
      a.href = j.short_url;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      result.append(a);
      result.append(' · ');
      const open = el('a', '', 'open it');
      open.href = hrefOf(Object.assign({}, state.view, { slug: l.slug, domain: viewDomain(l.slug) }));
      result.append(open);
      result.hidden = false;
      loadUsage();
      if (tags.length) tagsChanged();
      render();
    } catch (err) {
      const fields = err instanceof APIError ? err.fields : [];
      markFields(form, err);
      // An error in a hidden advanced field opens the options.
      if (fields.some((f) => !['url', 'slug', 'expires_at'].includes(f.field))) $('create-advanced').open = true;
      errEl.textContent = problemText(err);
      errEl.hidden = false;
    } finally {
      button.disabled = false;
    }
  }

  // ---------------------------------------------------------------- one link

  // renderManage shows the detail view's share and edit cards for l.
  function renderManage(l) {
    const section = $('manage');
    const show = !!(state.view.slug && l && state.missingLink !== state.view.slug);
    if (section.hidden === show) section.hidden = !show;
    if (!show) return;
    $('manage-short').textContent = l.short_url;
    $('manage-short').title = l.short_url;
    $('delete-slug').textContent = '/' + l.slug;
    const form = $('edit-form');
    if (form.dataset.slug !== l.slug || (form.dataset.updated !== l.updated && !state.editDirty)) fillEdit(l);
    if (state.qr.slug !== l.slug) loadQR(l.slug);
    if ($('share-stats-out').dataset.slug !== l.slug) resetShareStats(l.slug);
  }

  // fillEdit writes the link's values into the edit form.
  function fillEdit(l) {
    const form = $('edit-form');
    clearFields(form);
    $('edit-error').hidden = true;
    form.dataset.slug = l.slug;
    form.dataset.updated = l.updated;
    $('edit-url').value = l.url;
    $('edit-slug').value = l.slug;
    renderAliases(l.slug);
    $('edit-title').value = l.title;
    $('edit-tags').value = l.tags.join(', ');
    $('edit-expires').value = l.expires_at === null ? '' : localInput(l.expires_at);
    $('edit-max').value = l.max_clicks === null ? '' : String(l.max_clicks);
    $('edit-fallback').value = l.fallback_url;
    $('edit-ios').value = l.device_urls.ios;
    $('edit-android').value = l.device_urls.android;
    $('edit-desktop').value = l.device_urls.desktop;
    $('edit-notes').value = l.notes;
    $('edit-archived').checked = l.archived;
    $('edit-valid-since').value = l.valid_since === null ? '' : localInput(l.valid_since);
    $('edit-password').value = '';
    $('edit-nopass').checked = false;
    $('edit-password').disabled = false;
    $('edit-protected').hidden = !l.password_protected;
    $('edit-nopass-row').hidden = !l.password_protected;
    $('edit-password-label').textContent = l.password_protected ? 'New password' : 'Set a password';
    $('edit-password').placeholder = l.password_protected ? 'unchanged' : 'none';
    if (ext) ext.fillEdit(l);
    // The optional groups open when they hold something: closed, a
    // setting in them would go unseen.
    const holds = {
      devices: !!(l.device_urls.ios || l.device_urls.android || l.device_urls.desktop),
      password: !!l.password_protected,
      redirect: l.routing.redirect_status !== 302 || l.routing.forward_query,
      rules: l.routing.rules.length > 0,
      variants: l.routing.variants.length > 0,
      og: !!l.routing.og,
      utm: !!(l.routing.utm && Object.values(l.routing.utm).some((v) => v)),
    };
    const newLink = form.dataset.filled !== l.slug;
    form.dataset.filled = l.slug;
    for (const d of form.querySelectorAll('details.group')) {
      if (holds[d.dataset.group]) d.open = true;
      else if (newLink) d.open = false;
    }
    state.editDirty = false;
  }

  // renderAliases lists a link's old slugs, each removable (editors).
  function renderAliases(slug) {
    const list = state.aliases.get(slug) || [];
    $('edit-aliases').hidden = list.length === 0;
    $('aliases-list').replaceChildren(...list.map((a) => {
      const li = el('li', '', '/' + a + ' ');
      const b = el('button', 'btn btn-small btn-ghost', 'Remove');
      b.type = 'button';
      b.setAttribute('aria-label', 'Remove the old slug /' + a);
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          const d = domainParam(slug);
          await api('DELETE', `/api/v1/links/${encodeURIComponent(slug)}/aliases/${encodeURIComponent(a)}` + (d ? '?' + d.slice(1) : ''));
          state.wrote++;
          state.aliases.set(slug, (state.aliases.get(slug) || []).filter((x) => x !== a));
          renderAliases(slug);
          $('edit-status').textContent = `/${a} no longer redirects.`;
        } catch (err) {
          b.disabled = false;
          $('edit-error').textContent = problemText(err);
          $('edit-error').hidden = false;
        }
      });
      li.append(b);
      return li;
    }));
  }

  // editPatch is the PATCH body: the fields that differ from the link.
  function editPatch(l) {
    const body = {};
    const url = val('edit-url');
    if (url !== l.url) body.url = url;
    const slug = val('edit-slug');
    if (slug !== l.slug) body.slug = slug;
    const title = val('edit-title');
    if (title !== l.title) body.title = title || null;
    const tags = tagList($('edit-tags').value);
    if (tags.join('\n') !== l.tags.join('\n')) body.tags = tags.length ? tags : null;
    const exp = $('edit-expires').value;
    if (exp !== (l.expires_at === null ? '' : localInput(l.expires_at))) body.expires_at = exp ? new Date(exp).toISOString() : null;
    const max = $('edit-max').value;
    if (max !== (l.max_clicks === null ? '' : String(l.max_clicks)) || $('edit-max').validity.badInput) {
      body.max_clicks = max === '' ? ($('edit-max').validity.badInput ? 'not a number' : null) : Number(max);
    }
    const fallback = val('edit-fallback');
    if (fallback !== l.fallback_url) body.fallback_url = fallback || null;
    const devices = { ios: val('edit-ios'), android: val('edit-android'), desktop: val('edit-desktop') };
    if (['ios', 'android', 'desktop'].some((k) => devices[k] !== l.device_urls[k])) {
      // device_urls replaces the set: the keys left empty are not sent.
      const d = {};
      for (const k in devices) if (devices[k]) d[k] = devices[k];
      body.device_urls = Object.keys(d).length ? d : null;
    }
    const notes = $('edit-notes').value;
    if (notes !== l.notes) body.notes = notes || null;
    if ($('edit-archived').checked !== l.archived) body.archived = $('edit-archived').checked;
    const since = $('edit-valid-since').value;
    if (since !== (l.valid_since === null ? '' : localInput(l.valid_since))) body.valid_since = since ? new Date(since).toISOString() : null;
    if ($('edit-nopass').checked) body.password = null;
    else if ($('edit-password').value) body.password = $('edit-password').value;
    if (ext) ext.editPatch(l, body);
    return body;
  }

  async function onEditSubmit(ev) {
    ev.preventDefault();
    const form = ev.target;
    const slug = form.dataset.slug;
    const l = state.links.get(slug);
    if (!l) return;
    clearFields(form);
    const errEl = $('edit-error');
    errEl.hidden = true;
    const status = $('edit-status');
    const body = editPatch(l);
    if (Object.keys(body).length === 0) {
      status.textContent = 'Nothing to save.';
      return;
    }
    const button = $('edit-submit');
    button.disabled = true;
    status.textContent = 'Saving…';
    try {
      const j = await api('PATCH', linkURL(slug), body);
      state.wrote++;
      const nl = toLink(j, state.links.get(slug));
      state.aliases.set(j.slug, j.aliases || []);
      if (j.slug !== slug) {
        // Renamed: the page is the new slug's, the old one an alias.
        state.links.delete(slug);
        unlistLink(slug);
        state.view = Object.assign({}, state.view, { slug: j.slug });
        history.replaceState(null, '', hrefOf(state.view));
        syncControls();
      }
      state.links.set(j.slug, nl);
      listLink(nl);
      fillEdit(nl);
      status.textContent = j.slug !== slug ? `Saved. /${slug} now redirects here too.` : 'Saved.';
      if (body.tags !== undefined) tagsChanged();
      render();
    } catch (err) {
      status.textContent = '';
      const left = markFields(form, err);
      if (!(err instanceof APIError) || left.length || err.fields.length === 0) {
        errEl.textContent = err instanceof APIError && left.length ? left.join(' · ') : problemText(err);
        errEl.hidden = false;
      }
      const first = form.querySelector('[aria-invalid="true"]');
      if (first) first.focus();
    } finally {
      button.disabled = false;
    }
  }

  function onDeleteConfirm() {
    const slug = state.view.slug;
    if (!slug) return;
    $('delete-error').hidden = true;
    $('delete-confirm').hidden = false;
    $('delete-no').focus();
  }

  async function onDelete() {
    const slug = state.view.slug;
    if (!slug) return;
    const button = $('delete-yes');
    button.disabled = true;
    try {
      await api('DELETE', linkURL(slug));
      state.links.delete(slug);
      unlistLink(slug);
      state.live.delete(slug);
      tagsChanged();
      $('delete-confirm').hidden = true;
      navigate({ slug: null });
    } catch (err) {
      const e = $('delete-error');
      e.textContent = err instanceof APIError && err.status === 404 ? 'This link was deleted already.' : problemText(err);
      e.hidden = false;
    } finally {
      button.disabled = false;
    }
  }

  // copyText copies to the clipboard: the Clipboard API where the page may
  // use it (secure contexts), else the older execCommand way.
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch (err) { /* not allowed: try the other way */ }
    }
    const ta = el('textarea', 'sr-only');
    ta.value = text;
    ta.setAttribute('readonly', '');
    document.body.append(ta);
    ta.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (err) { ok = false; }
    ta.remove();
    return ok;
  }

  // resetShareStats forgets the stats page made for another link.
  function resetShareStats(slug) {
    const out = $('share-stats-out');
    out.dataset.slug = slug;
    out.hidden = true;
    $('share-stats-url').textContent = '';
    $('share-stats-status').textContent = 'A read-only page of this link\'s stats, for anyone holding its URL.';
  }

  // onShareStats makes a stats page of the link (POST .../shares) and
  // shows its URL, which the server shows this once.
  async function onShareStats() {
    const slug = state.view.slug;
    if (!slug) return;
    const status = $('share-stats-status');
    status.textContent = 'Creating the stats page…';
    try {
      const dp = domainParam(slug);
      const sh = await api('POST', `/api/v1/links/${encodeURIComponent(slug)}/shares${dp ? '?' + dp.slice(1) : ''}`, {});
      if (state.view.slug !== slug) return;
      $('share-stats-url').textContent = sh.url;
      $('share-stats-out').dataset.slug = slug;
      $('share-stats-out').hidden = false;
      status.textContent = 'Anyone with this URL sees the stats (never the target). Copy it now: it is not shown again.';
    } catch (err) {
      status.textContent = 'Could not share the stats: ' + err.message;
    }
  }

  async function onShareStatsCopy() {
    const status = $('share-stats-status');
    status.textContent = (await copyText($('share-stats-url').textContent)) ? 'Copied.' : 'Select the URL and copy it.';
  }

  async function onCopy(status) {
    const l = state.links.get(state.view.slug);
    if (!l) return;
    if (await copyText(l.short_url)) {
      status.textContent = 'Copied.';
    } else {
      // Selected, for the keyboard's copy.
      const range = document.createRange();
      range.selectNodeContents($('manage-short'));
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      status.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
    }
  }

  // qrQuery is the look the QR inputs ask for: a colour only once picked
  // (else the domain's or tenant's default), the level unless Default.
  function qrQuery() {
    let q = '';
    for (const [id, name] of [['qr-fg', 'fg'], ['qr-bg', 'bg']]) {
      const input = $(id);
      if (input.dataset.picked === '1') q += `&${name}=${encodeURIComponent(input.value)}`;
    }
    if ($('qr-ec').value) q += '&ec=' + $('qr-ec').value;
    return q;
  }

  // qrBlob fetches the link's QR code: with the token, so not by an img
  // element's own request. A refusal (a colour pair a scanner cannot
  // read) comes back with the server's words.
  async function qrBlob(slug, format, size) {
    const resp = await fetch(`/api/v1/links/${encodeURIComponent(slug)}/qr?format=${format}&size=${size}${domainParam(slug)}${qrQuery()}`,
      { headers: auth.headers(state.token, 'GET'), cache: 'no-store' });
    if (!resp.ok) {
      const problem = await resp.json().catch(() => null);
      const field = problem && problem.errors && problem.errors[0];
      throw new APIError(resp.status, field ? { detail: `${field.field} ${field.detail}` } : problem);
    }
    return resp.blob();
  }

  // loadQRDefaults shows the tenant's QR defaults in the inputs, once per
  // sign-in; the inputs stay unpicked, so the code keeps following them.
  async function loadQRDefaults() {
    if (state.qr.defaultsLoaded) return;
    state.qr.defaultsLoaded = true;
    try {
      const d = await api('GET', '/api/v1/qr/defaults');
      for (const [id, v] of [['qr-fg', d.fg], ['qr-bg', d.bg]]) {
        if (v && $(id).dataset.picked !== '1') $(id).value = v;
      }
    } catch (err) {
      // Only the inputs' starting colours: the code itself is right anyway.
    }
  }

  // onQRStyle redraws the open link's code with the inputs' look.
  function onQRStyle(ev) {
    if (ev && ev.target.type === 'color') ev.target.dataset.picked = '1';
    clearTimeout(state.qrTimer);
    state.qrTimer = setTimeout(() => { if (state.view.slug) loadQR(state.view.slug); }, 150);
  }

  async function loadQR(slug) {
    state.qr.slug = slug;
    const img = $('qr-img');
    const status = $('qr-status');
    img.hidden = true;
    status.textContent = 'Loading QR code…';
    loadQRDefaults();
    const query = qrQuery();
    // A newer load (another link, another look) wins over this one.
    const gen = state.qr.gen = (state.qr.gen || 0) + 1;
    try {
      const blob = await qrBlob(slug, 'png', QR_SIZE);
      if (state.qr.slug !== slug || state.qr.gen !== gen) return;
      if (state.qr.url) URL.revokeObjectURL(state.qr.url);
      state.qr.url = URL.createObjectURL(blob);
      img.dataset.query = query; // what the preview shows (the tests read it)
      img.onload = () => {
        img.hidden = false;
        status.textContent = 'Scan to open the short URL.';
      };
      img.src = state.qr.url;
    } catch (err) {
      if (state.qr.slug !== slug || state.qr.gen !== gen) return;
      if (err.status === 400) {
        status.textContent = 'Cannot draw this QR code: ' + err.message;
        return; // the inputs are wrong, not the network: no retry
      }
      state.qr.slug = null; // the next render tries again
      status.textContent = 'Could not load the QR code: ' + err.message;
    }
  }

  async function onQRDownload(format) {
    const slug = state.view.slug;
    if (!slug) return;
    const status = $('qr-status');
    try {
      const blob = await qrBlob(slug, format, format === 'png' ? 1024 : 256);
      const url = URL.createObjectURL(blob);
      const a = el('a');
      a.href = url;
      a.download = `${slug}-qr.${format}`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60 * 1000);
    } catch (err) {
      status.textContent = 'Could not download the QR code: ' + err.message;
    }
  }

  function onCustomRange(ev) {
    ev.preventDefault();
    const errEl = $('range-error');
    errEl.hidden = true;
    const from = $('range-from').value ? new Date($('range-from').value).getTime() : NaN;
    const to = $('range-to').value ? new Date($('range-to').value).getTime() : NaN;
    let msg = '';
    if (Number.isNaN(from)) msg = 'from: pick a start';
    else if (Number.isNaN(to)) msg = 'to: pick an end';
    else if (from >= to) msg = 'to: must be after from';
    else if (to - from > MAX_CUSTOM_SPAN) msg = 'from: the range may span 400 days at most';
    if (msg) {
      errEl.textContent = msg;
      errEl.hidden = false;
      return;
    }
    navigate({ range: 'custom', from, to });
  }

  function onRangeClick(ev) {
    const b = ev.target.closest('button[data-range]');
    if (!b) return;
    if (b.dataset.range === 'custom') {
      // Opens the form, filled with the range shown; Apply shows it.
      const r = currentRange();
      $('range-from').value = localInput(r.from);
      $('range-to').value = localInput(Math.min(r.to, Date.now()));
      $('custom-range').hidden = false;
      $('range-from').focus();
      return;
    }
    navigate({ range: b.dataset.range });
  }

  function showLoadError(err) {
    if (err instanceof APIError && err.status === 401) return; // signed out already
    setConn('reconnecting', 'Data may be stale');
  }

  // ---------------------------------------------------------------- session

  // showRole tells the page the token's role (GET /api/v1/me), so that a
  // viewer is not offered the writes the server would refuse. A token's
  // role never changes: it is asked once per token and tab.
  async function showRole() {
    const key = TOKEN_KEY + '.role';
    let role = sessionStorage.getItem(key);
    if (!role) {
      try {
        role = (await api('GET', '/api/v1/me')).role;
        sessionStorage.setItem(key, role);
      } catch (err) {
        delete document.body.dataset.role; // an older server: show everything
        return;
      }
    }
    document.body.dataset.role = role;
  }

  function start() {
    showRole();
    auth.mount(state.token, signOut);
    $('signin').hidden = true;
    $('app').hidden = false;
    $('session').hidden = false;
    $('nav').hidden = false;
    state.openedOnce = false;
    state.attempts = 0;
    state.view = parseLocation();
    if (legacyAddress()) history.replaceState(null, '', hrefOf(state.view));
    syncControls();
    render();
    renderPanels();
    connect();
    refresh();
    clearInterval(state.refreshTimer);
    state.refreshTimer = setInterval(() => {
      if (state.ws && state.ws.readyState === WebSocket.OPEN && currentRange().live) refresh();
    }, REFRESH_EVERY);
    // The charts slide with the clock even when nothing happens.
    clearInterval(state.tickTimer);
    state.tickTimer = setInterval(scheduleRender, 10 * 1000);
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(TOKEN_KEY + '.role');
    delete document.body.dataset.role;
    auth.unmount();
    state.token = null;
    state.wsGen++;
    state.loadGen++;
    if (state.ws) state.ws.close(1000, 'signed out');
    state.ws = null;
    clearTimeout(state.reconnectTimer);
    clearInterval(state.countdownTimer);
    clearInterval(state.refreshTimer);
    clearInterval(state.tickTimer);
    state.links = new Map();
    state.live = new Map();
    state.snap = null;
    state.panels = null;
    state.missingLink = null;
    state.list = { slugs: [], cursor: null, gen: state.list.gen + 1, busy: 0 };
    if (state.qr.url) URL.revokeObjectURL(state.qr.url);
    state.qr = { slug: null, url: null };
    for (const id of ['qr-fg', 'qr-bg']) delete $(id).dataset.picked;
    $('qr-ec').value = '';
    $('edit-form').dataset.slug = '';
    $('links-body').replaceChildren();
    $('app').hidden = true;
    $('session').hidden = true;
    $('nav').hidden = true;
    clearTimeout(state.usageTimer);
    state.usageGen++;
    state.tagsLoaded = false;
    if (ext) ext.reset();
    $('signin').hidden = false;
    const errEl = $('token-error');
    errEl.textContent = message || '';
    errEl.hidden = !message;
    $('token').focus();
  }

  function init() {
    $('traffic-show-all').addEventListener('click', () => { if (ext) ext.setTraffic(''); });
    $('token-form').addEventListener('submit', onTokenSubmit);
    $('create-form').addEventListener('submit', onCreateSubmit);
    $('edit-form').addEventListener('submit', onEditSubmit);
    $('edit-form').addEventListener('input', () => { state.editDirty = true; });
    $('edit-reset').addEventListener('click', () => {
      const l = state.links.get(state.view.slug);
      if (l) fillEdit(l);
      $('edit-status').textContent = '';
    });
    $('edit-nopass').addEventListener('change', () => {
      $('edit-password').disabled = $('edit-nopass').checked;
    });
    $('delete-link').addEventListener('click', onDeleteConfirm);
    $('delete-no').addEventListener('click', () => { $('delete-confirm').hidden = true; $('delete-link').focus(); });
    $('delete-yes').addEventListener('click', onDelete);
    $('copy-link').addEventListener('click', () => onCopy($('copy-status')));
    $('head-copy').addEventListener('click', () => onCopy($('head-copy-status')));
    // The link page's parts: a click scrolls to one.
    const parts = { overview: 'sec-overview', analytics: 'sec-analytics', settings: 'manage', share: 'share-card' };
    document.addEventListener('click', (ev) => {
      const b = ev.target.closest && ev.target.closest('button[data-goto]');
      if (!b) return;
      for (const x of $('link-nav').querySelectorAll('button')) x.setAttribute('aria-current', String(x === b));
      $(parts[b.dataset.goto]).scrollIntoView({ block: 'start', behavior: 'smooth' });
    });
    $('share-stats').addEventListener('click', onShareStats);
    $('share-stats-copy').addEventListener('click', onShareStatsCopy);
    $('qr-png').addEventListener('click', () => onQRDownload('png'));
    $('qr-svg').addEventListener('click', () => onQRDownload('svg'));
    $('qr-fg').addEventListener('input', onQRStyle);
    $('qr-bg').addEventListener('input', onQRStyle);
    $('qr-ec').addEventListener('change', onQRStyle);
    $('qr-style-reset').addEventListener('click', () => {
      for (const id of ['qr-fg', 'qr-bg']) delete $(id).dataset.picked;
      $('qr-fg').value = '#000000';
      $('qr-bg').value = '#ffffff';
      $('qr-ec').value = '';
      state.qr.defaultsLoaded = false;
      onQRStyle();
    });
    $('links-filter').addEventListener('submit', (ev) => { ev.preventDefault(); clearTimeout(state.searchTimer); onFilterChange(); });
    $('links-q').addEventListener('input', () => {
      clearTimeout(state.searchTimer);
      state.searchTimer = setTimeout(onFilterChange, SEARCH_DELAY);
    });
    for (const id of ['links-tag', 'links-state', 'links-sort']) $(id).addEventListener('change', onFilterChange);
    $('links-more').addEventListener('click', () => loadList(true));
    $('custom-range').addEventListener('submit', onCustomRange);
    $('range-seg').addEventListener('click', onRangeClick);
    $('signout').addEventListener('click', () => auth.leave(state.token, false, signOut));
    window.addEventListener('hashchange', onLocationChange);
    window.addEventListener('popstate', onLocationChange);
    document.addEventListener('click', onNavClick);
    if (window.ResizeObserver) {
      let last = 0;
      new ResizeObserver(() => {
        const w = $('chart').clientWidth;
        if (w !== last) { last = w; scheduleRender(); }
      }).observe($('chart'));
    }
    window.addEventListener('online', () => {
      if (state.token && !state.ws) connect();
    });
    if (ext) ext.attach({ api, linkURL, domainParam, onTraffic: refresh, fields: (err) => (err instanceof APIError ? err.fields : []) });
    state.token = sessionStorage.getItem(TOKEN_KEY);
    if (state.token) start();
    else auth.probe().then((cred) => { if (cred) { state.token = cred; start(); } else signOut(); });
  }

  init();
})();

// The operator page: every tenant (suspend, resume) and the links of every
// tenant (search, block with a reason, unblock), through
// /api/v1/operator/*. The credential is a pasted operator token (kept in
// this tab's session storage) or the session cookie of an operator user
// (whose writes carry the CSRF token GET /api/v1/me gives). Everything
// from the server is written as text, never as HTML.
'use strict';
(function () {
  const KEY = 'linkforge.operator';
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem(KEY);
  let csrf = '';

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  async function api(method, path, body) {
    const h = { Accept: 'application/json' };
    if (token) h.Authorization = 'Bearer ' + token;
    else if (method !== 'GET') h['X-CSRF-Token'] = csrf;
    if (body) h['Content-Type'] = 'application/json';
    const resp = await fetch(path, { method, headers: h, body: body ? JSON.stringify(body) : undefined, cache: 'no-store' });
    const data = await resp.json().catch(() => null);
    if (!resp.ok) {
      const err = new Error((data && data.detail) || ('HTTP ' + resp.status));
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  function showError(err) {
    const p = $('op-error');
    p.textContent = err ? err.message : '';
    p.hidden = !err;
  }

  function button(label, action, onClick) {
    const b = el('button', 'btn btn-ghost', label);
    b.type = 'button';
    b.dataset.action = action;
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await onClick();
        showError(null);
        await refresh();
      } catch (err) {
        showError(err);
      } finally {
        b.disabled = false;
      }
    });
    return b;
  }

  const seg = encodeURIComponent;

  // latest resolves to what get answers for one table, or to null when a
  // newer load of that table began meanwhile: a refresh after a click
  // reads the search as it was then, and its late answer must not replace
  // the rows of a search made since (or a row about to be clicked).
  const loads = {};
  async function latest(table, get) {
    const mine = loads[table] = (loads[table] || 0) + 1;
    try {
      const data = await get();
      return mine === loads[table] ? data : null;
    } catch (err) {
      if (mine === loads[table]) throw err;
      return null;
    }
  }

  async function loadTenants() {
    const data = await latest('tenants', () => api('GET', '/api/v1/operator/tenants'));
    if (!data) return;
    const body = $('tenants');
    body.textContent = '';
    for (const t of data.tenants) {
      const tr = el('tr');
      tr.dataset.tenant = t.name;
      tr.dataset.state = t.state;
      const state = el('td');
      state.append(el('span', 'badge ' + (t.state === 'active' ? 'badge-active' : 'badge-expired'), t.state));
      tr.append(el('td', '', t.name), state, el('td', '', t.links), el('td', '', t.clicks_this_month), el('td', '', t.users));
      const actions = el('td', 'actions');
      if (t.state === 'active') actions.append(button('Suspend', 'suspend', () => api('POST', '/api/v1/operator/tenants/' + seg(t.name) + '/suspend')));
      else actions.append(button('Resume', 'resume', () => api('POST', '/api/v1/operator/tenants/' + seg(t.name) + '/resume')));
      tr.append(actions);
      body.append(tr);
    }
  }

  async function loadLinks() {
    const q = new URLSearchParams();
    for (const [k, id] of [['q', 'q'], ['target_host', 'target-host'], ['state', 'state']]) {
      if ($(id).value) q.set(k, $(id).value);
    }
    const data = await latest('links', () => api('GET', '/api/v1/operator/links?' + q.toString()));
    if (!data) return;
    const body = $('links');
    body.textContent = '';
    for (const l of data.links) {
      const tr = el('tr');
      tr.dataset.id = l.id;
      tr.dataset.slug = l.slug;
      tr.dataset.state = l.state;
      const state = el('td');
      state.append(el('span', 'badge ' + (l.state === 'active' ? 'badge-active' : 'badge-expired'), l.state));
      if (l.blocked_reason) state.append(el('div', 'muted small', l.blocked_reason));
      tr.append(el('td', '', l.tenant), el('td', '', l.short_url), el('td', 'muted small', l.url), state, el('td', '', l.clicks));
      const actions = el('td', 'actions');
      if (l.state === 'blocked') {
        actions.append(button('Unblock', 'unblock', () => api('DELETE', '/api/v1/operator/links/' + seg(l.id) + '/block')));
      } else {
        actions.append(button('Block', 'block', async () => {
          const reason = window.prompt('Why is /' + l.slug + ' blocked? (its tenant reads it)');
          if (!reason) return;
          await api('POST', '/api/v1/operator/links/' + seg(l.id) + '/block', { reason });
        }));
      }
      tr.append(actions);
      body.append(tr);
    }
  }

  const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

  // loadReports lists the abuse reports (the open ones by default), each
  // open one with Block (the link answers 451, the report is closed) and
  // Dismiss.
  async function loadReports() {
    const data = await latest('reports', () => api('GET', '/api/v1/operator/reports' + ($('reports-open').checked ? '?state=open' : '')));
    if (!data) return;
    const body = $('reports');
    body.textContent = '';
    for (const r of data.reports) {
      const tr = el('tr');
      tr.dataset.id = r.id;
      tr.dataset.state = r.state;
      const link = r.slug ? r.tenant + ' /' + r.slug : 'no link';
      const state = el('td');
      state.append(el('span', 'badge ' + (r.state === 'open' ? 'badge-expiring' : r.state === 'blocked' ? 'badge-expired' : 'badge-active'), r.state));
      tr.append(el('td', 'muted small', when.format(new Date(r.created_at))), el('td', 'muted small', r.url), el('td', '', r.reason), el('td', '', link), state);
      const actions = el('td', 'actions');
      if (r.state === 'open') {
        const resolve = (action) => () => api('POST', '/api/v1/operator/reports/' + seg(r.id) + '/resolve', { action });
        if (r.link_id) actions.append(button('Block', 'block', resolve('block')));
        actions.append(button('Dismiss', 'dismiss', resolve('dismiss')));
      }
      tr.append(actions);
      body.append(tr);
    }
    $('reports-empty').hidden = data.reports.length > 0;
  }

  async function refresh() {
    await loadTenants();
    await loadLinks();
    await loadReports();
  }

  async function open() {
    try {
      await refresh();
    } catch (err) {
      if (err.status === 401 || err.status === 403) {
        sessionStorage.removeItem(KEY);
        token = null;
        $('app').hidden = true;
        $('signin').hidden = false;
        if (err.status === 403 || $('token').value) {
          $('token-error').textContent = err.message;
          $('token-error').hidden = false;
        }
        return;
      }
      showError(err);
    }
    $('signin').hidden = true;
    $('app').hidden = false;
  }

  async function start() {
    if (!token) {
      // An operator user's session: its CSRF token for the writes.
      try {
        const resp = await fetch('/api/v1/me', { headers: { Accept: 'application/json' }, cache: 'no-store' });
        if (resp.ok) csrf = ((await resp.json()) || {}).csrf_token || '';
      } catch (err) {
        // no session: the token form
      }
      if (!csrf) {
        $('signin').hidden = false;
        return;
      }
    }
    await open();
  }

  $('token-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    token = $('token').value.trim();
    sessionStorage.setItem(KEY, token);
    $('token-error').hidden = true;
    await open();
  });
  $('link-search').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await loadLinks();
      showError(null);
    } catch (err) {
      showError(err);
    }
  });
  $('reports-open').addEventListener('change', () => loadReports().then(() => showError(null), showError));
  start();
})();

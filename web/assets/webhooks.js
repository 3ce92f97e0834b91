// The webhooks page: create a webhook (its secret is shown once), list and
// delete them, and read a webhook's delivery log, replaying dead
// deliveries. It uses the admin API with the token the dashboard keeps in
// this tab's session storage, or asks for one.
'use strict';
(function () {
  const TOKEN_KEY = 'linkforge.token';
  const EVENTS = ['link.created', 'link.updated', 'link.deleted', 'link.expired',
    'link.limit_reached', 'alarm.dead', 'link.clicks'];
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem(TOKEN_KEY);
  let current = null; // the webhook whose log is shown

  async function api(method, path, body) {
    const headers = { Authorization: 'Bearer ' + token, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (resp.status === 204) return null;
    const data = await resp.json().catch(() => ({}));
    if (!resp.ok) {
      const err = new Error(data.detail || data.title || ('HTTP ' + resp.status));
      err.status = resp.status;
      err.problem = data;
      throw err;
    }
    return data;
  }

  function problemText(err) {
    const p = err.problem || {};
    if (Array.isArray(p.errors) && p.errors.length) {
      return p.errors.map((e) => e.field + ': ' + e.detail).join('; ');
    }
    return err.message;
  }

  function cell(text) {
    const td = document.createElement('td');
    td.textContent = text;
    return td;
  }

  function button(label, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'btn btn-ghost';
    b.textContent = label;
    b.addEventListener('click', onClick);
    return b;
  }

  async function loadWebhooks() {
    const data = await api('GET', '/api/v1/webhooks');
    const body = $('webhooks');
    body.textContent = '';
    for (const w of data.webhooks) {
      const tr = document.createElement('tr');
      tr.dataset.id = w.id;
      tr.append(cell(w.url), cell(w.events.join(', ')));
      const actions = document.createElement('td');
      actions.append(button('Deliveries', () => showLog(w)), button('Delete', () => onDelete(w)));
      tr.append(actions);
      body.append(tr);
    }
    $('webhooks-empty').hidden = data.webhooks.length > 0;
  }

  async function showLog(w) {
    current = w;
    $('log').hidden = false;
    $('log-url').textContent = w.url;
    await loadLog();
  }

  async function loadLog() {
    if (!current) return;
    const errEl = $('log-error');
    errEl.hidden = true;
    try {
      const data = await api('GET', '/api/v1/webhooks/' + encodeURIComponent(current.id) + '/deliveries');
      const body = $('deliveries');
      body.textContent = '';
      for (const d of data.deliveries) {
        const tr = document.createElement('tr');
        tr.dataset.id = d.id;
        tr.dataset.state = d.state;
        tr.append(cell(d.event), cell(d.state), cell(String(d.attempts)),
          cell(d.last_status === null ? '—' : String(d.last_status)),
          cell(d.next_attempt_at ? new Date(d.next_attempt_at).toLocaleString() : '—'));
        const actions = document.createElement('td');
        if (d.state === 'dead') actions.append(button('Replay', () => onReplay(d)));
        tr.append(actions);
        body.append(tr);
      }
    } catch (err) {
      errEl.textContent = problemText(err);
      errEl.hidden = false;
    }
  }

  async function onReplay(d) {
    try {
      await api('POST', '/api/v1/webhooks/deliveries/' + encodeURIComponent(d.id) + '/retry');
    } catch (err) {
      $('log-error').textContent = problemText(err);
      $('log-error').hidden = false;
    }
    await loadLog();
  }

  async function onDelete(w) {
    if (!confirm('Delete the webhook to ' + w.url + '? Its pending deliveries are cancelled.')) return;
    await api('DELETE', '/api/v1/webhooks/' + encodeURIComponent(w.id));
    if (current && current.id === w.id) {
      current = null;
      $('log').hidden = true;
    }
    await loadWebhooks();
  }

  async function onCreate(ev) {
    ev.preventDefault();
    const errEl = $('create-error');
    errEl.hidden = true;
    const events = EVENTS.filter((e) => $('ev-' + e).checked);
    try {
      const w = await api('POST', '/api/v1/webhooks', { url: $('wh-url').value.trim(), events });
      $('secret').textContent = w.secret;
      $('secret-box').hidden = false;
      $('create-form').reset();
      await loadWebhooks();
    } catch (err) {
      errEl.textContent = problemText(err);
      errEl.hidden = false;
    }
  }

  async function start() {
    try {
      await loadWebhooks();
    } catch (err) {
      if (err.status === 401) {
        sessionStorage.removeItem(TOKEN_KEY);
        token = null;
        $('token-error').textContent = 'This token was not accepted.';
        $('token-error').hidden = false;
        $('signin').hidden = false;
        return;
      }
      throw err;
    }
    $('signin').hidden = true;
    $('app').hidden = false;
  }

  function init() {
    const fs = $('wh-events');
    for (const e of EVENTS) {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.id = 'ev-' + e;
      box.checked = e !== 'link.clicks';
      label.append(box, ' ' + e);
      fs.append(label);
    }
    $('create-form').addEventListener('submit', onCreate);
    $('log-refresh').addEventListener('click', loadLog);
    $('token-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      token = $('token').value.trim();
      if (!token) return;
      sessionStorage.setItem(TOKEN_KEY, token);
      start();
    });
    if (token) start(); else $('signin').hidden = false;
  }
  init();
})();

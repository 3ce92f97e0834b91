// The alarms page: the links' expiry alarms (dead ones first shown, each
// with Replay) and every webhook's dead deliveries (Replay), the work the
// server does on its own and could not finish. Owners only, as the API.
// Everything from the server is written as text (textContent).
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const auth = window.LinkForgeAuth;

  // The page's sign-in, role and API calls (session.js); set in init.
  let api;
  const problemText = auth.problemText;
  const el = auth.el;
  const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const BADGE = {
    done: 'badge-active', scheduled: 'badge-pending', running: 'badge-pending', retrying: 'badge-expiring', dead: 'badge-expired',
  };

  // Each list's loads are numbered; an answer older than the one shown
  // is dropped: a late one (an earlier filter's, or the list before a
  // Replay) would replace newer rows.
  const loads = { alarms: auth.answers(), dead: auth.answers() };

  function badge(state) { return el('span', 'badge ' + (BADGE[state] || 'badge-pending'), state); }
  function cell(text, cls) { return el('td', cls || '', text); }
  function button(label, onClick, action) {
    const b = el('button', 'btn btn-ghost', label);
    b.type = 'button';
    b.dataset.action = action;
    b.addEventListener('click', () => onClick(b));
    return b;
  }
  function linkCell(slug) {
    const td = el('td', 'slug');
    if (!slug) {
      td.textContent = '–';
      return td;
    }
    const a = el('a', '', '/' + slug);
    a.href = '/dashboard#' + new URLSearchParams({ link: slug, range: '24h' }).toString();
    td.append(a);
    return td;
  }
  function showError(id, err) {
    if (err.status === 401) return;
    $(id).textContent = err.status === 403 ? 'Only an owner can see and replay alarms.' : problemText(err);
    $(id).hidden = false;
  }

  async function loadAlarms() {
    const n = loads.alarms.ask();
    const state = $('alarm-state').value;
    const data = await api('GET', '/api/v1/alarms' + (state ? '?state=' + encodeURIComponent(state) : ''));
    if (!loads.alarms.newest(n)) return;
    const body = $('alarms');
    body.textContent = '';
    for (const a of data.alarms) {
      const tr = el('tr');
      tr.dataset.id = a.id;
      tr.dataset.state = a.state;
      const st = el('td');
      st.append(badge(a.state));
      const actions = el('td', 'actions');
      if (a.state === 'dead') actions.append(button('Replay', (b) => replay(b, '/api/v1/alarms/' + encodeURIComponent(a.id) + '/retry', 'alarms-error', loadAlarms), 'replay'));
      tr.append(linkCell(a.link), st, cell(dateFmt.format(new Date(a.due_at))), cell(String(a.attempt), 'num'),
        cell(String((a.failures || []).length), 'num'), actions);
      body.append(tr);
    }
    $('alarms-empty').hidden = data.alarms.length > 0;
    $('alarms-error').hidden = true;
  }

  // loadDead lists the dead deliveries of every webhook of the tenant.
  async function loadDead() {
    const n = loads.dead.ask();
    const hooks = (await api('GET', '/api/v1/webhooks')).webhooks;
    const lists = await Promise.all(hooks.map((w) =>
      api('GET', '/api/v1/webhooks/' + encodeURIComponent(w.id) + '/deliveries?state=dead').then((d) => ({ w, ds: d.deliveries }))));
    if (!loads.dead.newest(n)) return;
    const body = $('dead');
    body.textContent = '';
    for (const { w, ds } of lists) {
      for (const d of ds) {
        const tr = el('tr');
        tr.dataset.id = d.id;
        const actions = el('td', 'actions');
        actions.append(button('Replay', (b) => replay(b, '/api/v1/webhooks/deliveries/' + encodeURIComponent(d.id) + '/retry', 'dead-error', loadDead), 'replay'));
        tr.append(cell(w.url, 'wh-url'), cell(d.event, 'event'), linkCell(d.link), cell(String(d.attempts), 'num'),
          cell(d.last_status === null ? '–' : String(d.last_status), 'num'), actions);
        body.append(tr);
      }
    }
    $('dead-empty').hidden = body.children.length > 0;
    $('dead-error').hidden = true;
  }

  async function replay(btn, path, errID, reload) {
    btn.disabled = true;
    try {
      await api('POST', path);
      await reload();
    } catch (err) {
      btn.disabled = false;
      showError(errID, err);
    }
  }

  function init() {
    $('alarm-state').addEventListener('change', () => loadAlarms().catch((err) => showError('alarms-error', err)));
    $('dead-refresh').addEventListener('click', () => loadDead().catch((err) => showError('dead-error', err)));
    api = auth.page({ load: async () => { await loadAlarms(); loadDead().catch((err) => showError('dead-error', err)); }, forbidden: (err) => showError('alarms-error', err), clear: () => {
      $('alarms').textContent = '';
      $('dead').textContent = '';
      // A list still on its way is the signed-out caller's: dropped.
      loads.alarms.dropAll();
      loads.dead.dropAll();
    } });
  }
  init();
})();

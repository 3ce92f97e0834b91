// The webhooks page: create a webhook (its secret is shown once), list,
// re-enable and delete them, send one a test event, and read a webhook's
// delivery log, replaying dead deliveries. It uses the admin API with the token the dashboard
// keeps in this tab's session storage, or the session cookie, or asks for a token. Everything from
// the server is written as text (textContent), never as HTML.
'use strict';
(function () {
  const TOKEN_KEY = 'linkforge.token';
  const EVENTS = ['link.created', 'link.updated', 'link.deleted', 'link.expired',
    'link.limit_reached', 'alarm.dead', 'link.clicks'];
  const $ = (id) => document.getElementById(id);
  // A token, or auth.SESSION when signed in by cookie (session.js).
  const auth = window.LinkForgeAuth;
  const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  let token = sessionStorage.getItem(TOKEN_KEY);
  let current = null; // the webhook whose log is shown
  // Each list's loads are numbered; an answer older than the one shown
  // (it arrived late) is dropped, as is a log of a webhook no longer
  // open: it would replace newer rows, or show another webhook's log.
  const loads = { list: auth.answers(), log: auth.answers() };

  const api = auth.client(() => token, (message) => signOut(message));
  // REFUSED is what the page says when the server refuses the caller's
  // role (403): a sentence, not the problem's text.
  const REFUSED = 'Only an owner can manage webhooks.';
  const problemText = (err) => (err.status === 403 ? REFUSED : auth.problemText(err));
  const el = auth.el;

  function cell(text, cls) {
    return el('td', cls, text);
  }

  function button(label, onClick, cls) {
    const b = el('button', cls || 'btn btn-ghost', label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  // The badge classes of the dashboard's style sheet, by state.
  const BADGES = {
    active: 'badge-active', disabled: 'badge-expired',
    delivered: 'badge-active', pending: 'badge-pending', retrying: 'badge-expiring', dead: 'badge-expired',
  };

  function badge(state) {
    return el('span', 'badge ' + (BADGES[state] || 'badge-pending'), state);
  }

  async function loadWebhooks() {
    const n = loads.list.ask();
    const data = await api('GET', '/api/v1/webhooks');
    if (!loads.list.newest(n)) return;
    const body = $('webhooks');
    body.textContent = '';
    for (const w of data.webhooks) {
      const tr = el('tr');
      tr.dataset.id = w.id;
      const state = w.state || 'active'; // servers before webhook states: all active
      tr.dataset.state = state;
      if (current && current.id === w.id) tr.classList.add('current');
      const url = cell(w.url, 'wh-url');
      url.title = w.url;
      const events = el('td', 'wh-events');
      events.append(...w.events.map((e) => el('span', 'tag', e)));
      const st = el('td');
      st.append(badge(state));
      const actions = el('td', 'actions');
      actions.append(button('Deliveries', () => showLog(w)));
      // A disabled webhook gets no deliveries, a test neither (409): it
      // offers Enable instead.
      if (state === 'disabled') {
        actions.append(button('Enable', () => onEnable(w)));
      } else {
        const test = button('Send test event', () => onTest(w, test));
        test.dataset.action = 'test';
        actions.append(test);
      }
      actions.append(button('Delete', () => onDelete(w)));
      tr.append(url, events, st, actions);
      body.append(tr);
    }
    $('webhooks-empty').hidden = data.webhooks.length > 0;
  }

  async function showLog(w) {
    current = w;
    for (const tr of $('webhooks').children) tr.classList.toggle('current', tr.dataset.id === w.id);
    $('log').hidden = false;
    $('log-url').textContent = w.url;
    await loadLog();
  }

  // linkCell names the link a delivery's event is about, as a way to its
  // view on the dashboard; events of no link (alarm.dead) have none.
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

  async function loadLog() {
    if (!current) return;
    const n = loads.log.ask();
    const id = current.id;
    const errEl = $('log-error');
    errEl.hidden = true;
    try {
      const data = await api('GET', '/api/v1/webhooks/' + encodeURIComponent(id) + '/deliveries');
      if (!current || current.id !== id || !loads.log.newest(n)) return;
      const body = $('deliveries');
      body.textContent = '';
      for (const d of data.deliveries) {
        const tr = el('tr');
        tr.dataset.id = d.id;
        tr.dataset.state = d.state;
        const st = el('td');
        st.append(badge(d.state));
        const event = cell(d.event, 'event');
        event.title = d.event_id;
        tr.append(event, linkCell(d.link), st, cell(String(d.attempts), 'num'),
          cell(d.last_status === null ? '–' : String(d.last_status), 'num'),
          cell(d.next_attempt_at ? dateFmt.format(new Date(d.next_attempt_at)) : '–'));
        const actions = el('td', 'actions');
        if (d.state === 'dead') actions.append(button('Replay', () => onReplay(d)));
        tr.append(actions);
        body.append(tr);
      }
      $('log-empty').hidden = data.deliveries.length > 0;
    } catch (err) {
      if (!current || current.id !== id || !loads.log.current(n)) return;
      errEl.textContent = problemText(err);
      errEl.hidden = false;
    }
  }

  function showListError(err) {
    $('webhooks-error').textContent = problemText(err);
    $('webhooks-error').hidden = false;
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

  // onTest queues a webhook.test event for w alone, then shows w's log,
  // where its delivery is the newest row.
  async function onTest(w, btn) {
    $('webhooks-error').hidden = true;
    btn.disabled = true;
    try {
      await api('POST', '/api/v1/webhooks/' + encodeURIComponent(w.id) + '/test');
      await showLog(w);
    } catch (err) {
      showListError(err);
      // A 409: the webhook was disabled meanwhile (a 410 Gone); the list
      // says so.
      if (err.status === 409) await loadWebhooks().catch(() => {});
    } finally {
      btn.disabled = false;
    }
  }

  async function onEnable(w) {
    $('webhooks-error').hidden = true;
    try {
      await api('PATCH', '/api/v1/webhooks/' + encodeURIComponent(w.id), { state: 'active' });
      await loadWebhooks();
    } catch (err) {
      showListError(err);
    }
  }

  async function onDelete(w) {
    if (!confirm('Delete the webhook to ' + w.url + '? Its pending deliveries are cancelled.')) return;
    $('webhooks-error').hidden = true;
    try {
      await api('DELETE', '/api/v1/webhooks/' + encodeURIComponent(w.id));
      if (current && current.id === w.id) {
        current = null;
        $('log').hidden = true;
      }
      await loadWebhooks();
    } catch (err) {
      showListError(err);
    }
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
      if (!current || current.id !== id || !loads.log.current(n)) return;
      errEl.textContent = problemText(err);
      errEl.hidden = false;
    }
  }

  async function onCopySecret() {
    const text = $('secret').textContent;
    try {
      await navigator.clipboard.writeText(text);
      $('copy-secret').textContent = 'Copied';
    } catch (err) {
      // Not allowed here: selected, for the keyboard's copy.
      const range = document.createRange();
      range.selectNodeContents($('secret'));
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      $('copy-secret').textContent = 'Selected';
    }
  }

  async function start() {
    try {
      await loadWebhooks();
    } catch (err) {
      if (err.status === 401) return; // signed out, with the reason
      if (err.status === 403) return refused();
      $('token-error').textContent = problemText(err);
      $('token-error').hidden = false;
      $('signin').hidden = false;
      return;
    }
    $('signin').hidden = true;
    $('refused').hidden = true;
    $('app').hidden = false;
    $('nav').hidden = false;
    $('session').hidden = false;
    document.body.dataset.role = 'owner'; // only an owner reads the webhooks
    auth.mount(token, signOut);
  }

  // refused shows an editor or viewer, signed in, why there is nothing
  // here: the menu and the sign-out stay, the sign-in card does not.
  async function refused() {
    const me = await auth.whoami(token).catch(() => null);
    if (me && me.role) document.body.dataset.role = me.role;
    $('signin').hidden = true;
    $('app').hidden = true;
    $('refused').hidden = false;
    $('nav').hidden = false;
    $('session').hidden = false;
    auth.mount(token, signOut);
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    auth.unmount();
    token = null;
    current = null;
    $('refused').hidden = true;
    $('app').hidden = true;
    $('nav').hidden = true;
    $('session').hidden = true;
    $('secret').textContent = '';
    $('secret-box').hidden = true;
    $('webhooks').textContent = '';
    $('deliveries').textContent = '';
    // A list still on its way is the signed-out caller's: dropped.
    loads.list.dropAll();
    loads.log.dropAll();
    $('log').hidden = true;
    $('token-error').textContent = message || '';
    $('token-error').hidden = !message;
    $('signin').hidden = false;
    $('token').focus();
  }

  function init() {
    const fs = $('wh-events');
    for (const e of EVENTS) {
      const label = el('label', 'check');
      const box = el('input');
      box.type = 'checkbox';
      box.id = 'ev-' + e;
      box.defaultChecked = e !== 'link.clicks'; // what the form's reset after a create returns to
      label.append(box, el('code', '', e));
      fs.append(label);
    }
    $('create-form').addEventListener('submit', onCreate);
    $('log-refresh').addEventListener('click', loadLog);
    $('copy-secret').addEventListener('click', onCopySecret);
    $('signout').addEventListener('click', () => auth.leave(token, false, signOut));
    $('token-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      token = $('token').value.trim();
      if (!token) return;
      $('token').value = '';
      sessionStorage.setItem(TOKEN_KEY, token);
      start();
    });
    if (token) start();
    else auth.probe().then((c) => { if (c) { token = c; start(); } else $('signin').hidden = false; });
  }
  init();
})();

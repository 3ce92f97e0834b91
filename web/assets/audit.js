// The audit log page: the tenant's writes, newest first, filtered by
// action (or a family of actions) and by who made them, a page at a time
// (GET /api/v1/audit with its cursor). Owners only, as the API. Everything
// from the server is written as text (textContent), never as HTML.
'use strict';
(function () {
  const TOKEN_KEY = 'linkforge.token';
  const PAGE = 50;
  const $ = (id) => document.getElementById(id);
  // A token, or auth.SESSION when signed in by cookie (session.js).
  const auth = window.LinkForgeAuth;
  let token = sessionStorage.getItem(TOKEN_KEY);
  let cursor = null; // the next page's, null when there is none

  const api = auth.client(() => token, (message) => signOut(message));
  const problemText = auth.problemText;
  const el = auth.el;

  // Who made a write, as a person reads it.
  const WHO = { token: 'token', user: '', cli: 'command line', operator: 'operator' };

  function eventRow(e) {
    const tr = el('tr');
    tr.dataset.action = e.action;
    const when = el('td', 'muted small');
    const at = new Date(e.at);
    when.append(el('time', '', at.toLocaleString()));
    when.firstChild.dateTime = e.at;
    const kind = WHO[e.actor.type] ?? e.actor.type;
    const who = el('td', '', (kind ? kind + ' ' : '') + e.actor.name);
    tr.append(when, who, el('td', 'audit-action', e.action), el('td', 'audit-target', e.target));
    return tr;
  }

  function query(from) {
    const q = new URLSearchParams({ limit: String(PAGE) });
    const action = $('audit-action').value;
    const actor = $('audit-actor').value.trim();
    if (action) q.set('action', action);
    if (actor) q.set('actor', actor);
    if (from) q.set('cursor', from);
    return '/api/v1/audit?' + q.toString();
  }

  // load shows the first page of the filter (more: the next page, added).
  async function load(more) {
    const data = await api('GET', query(more ? cursor : null));
    const body = $('audit');
    if (!more) body.textContent = '';
    for (const e of data.events) body.append(eventRow(e));
    cursor = data.next_cursor;
    $('audit-more').hidden = !cursor;
    $('audit-empty').hidden = body.children.length > 0;
    $('audit-error').hidden = true;
  }

  function showError(err) {
    if (err.status === 401) return;
    $('audit-error').textContent = err.status === 403 ? 'Only an owner can read the audit log.' : problemText(err);
    $('audit-error').hidden = false;
  }

  async function start() {
    try {
      await load(false);
    } catch (err) {
      if (err.status === 401) return; // signed out, with the reason
      if (err.status !== 403) {
        $('token-error').textContent = problemText(err);
        $('token-error').hidden = false;
        $('signin').hidden = false;
        return;
      }
      showError(err); // signed in, but not an owner: the page says so
    }
    $('signin').hidden = true;
    $('app').hidden = false;
    $('nav').hidden = false;
    $('session').hidden = false;
    const role = sessionStorage.getItem(TOKEN_KEY + '.role');
    if (role) document.body.dataset.role = role;
    auth.mount(token, signOut);
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    auth.unmount();
    token = null;
    $('app').hidden = true;
    $('nav').hidden = true;
    $('session').hidden = true;
    $('audit').textContent = '';
    $('token-error').textContent = message || '';
    $('token-error').hidden = !message;
    $('signin').hidden = false;
    $('token').focus();
  }

  function init() {
    $('audit-filter').addEventListener('submit', (ev) => {
      ev.preventDefault();
      load(false).catch(showError);
    });
    $('audit-action').addEventListener('change', () => load(false).catch(showError));
    $('audit-more').addEventListener('click', () => load(true).catch(showError));
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

// The audit log page: the tenant's writes, newest first, filtered by
// action (or a family of actions) and by who made them, a page at a time
// (GET /api/v1/audit with its cursor). Owners only, as the API. Everything
// from the server is written as text (textContent), never as HTML.
'use strict';
(function () {
  const PAGE = 50;
  const $ = (id) => document.getElementById(id);
  const auth = window.LinkForgeAuth;
  let cursor = null; // the next page's, null when there is none
  // The newest load's number: an older answer that arrives after it (the
  // filter changed while it was on its way) is dropped, not shown.
  let loads = 0;

  // The page's sign-in, role and API calls (session.js); set in init.
  let api;
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
    const mine = ++loads;
    // A new filter's first page: no "Older events" of the old one meanwhile.
    if (!more) $('audit-more').disabled = true;
    let data;
    try {
      data = await api('GET', query(more ? cursor : null));
    } catch (err) {
      if (mine !== loads) return;
      $('audit-more').disabled = false;
      throw err;
    }
    if (mine !== loads) return;
    const body = $('audit');
    if (!more) body.textContent = '';
    for (const e of data.events) body.append(eventRow(e));
    cursor = data.next_cursor;
    $('audit-more').hidden = !cursor;
    $('audit-more').disabled = false;
    $('audit-empty').hidden = body.children.length > 0;
    $('audit-error').hidden = true;
  }

  function showError(err) {
    if (err.status === 401) return;
    $('audit-error').textContent = err.status === 403 ? 'Only an owner can read the audit log.' : problemText(err);
    $('audit-error').hidden = false;
  }

  function init() {
    $('audit-filter').addEventListener('submit', (ev) => {
      ev.preventDefault();
      load(false).catch(showError);
    });
    $('audit-action').addEventListener('change', () => load(false).catch(showError));
    $('audit-more').addEventListener('click', () => load(true).catch(showError));
    api = auth.page({ load: () => load(false), forbidden: showError, clear: () => { loads++; $('audit').textContent = ''; } });
  }
  init();
})();

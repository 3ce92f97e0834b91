// LinkForge dashboard pages: how they authenticate, shared by every page.
//
// Two credentials. A pasted API token (kept in this tab's session storage,
// sent as a bearer token), or the session cookie that /login sets. The
// cookie is HttpOnly, so a page cannot see it: it asks GET /api/v1/me,
// which answers a session with its user, tenants and the CSRF token that
// every write by cookie must carry (X-CSRF-Token; the browser adds the
// same-origin Origin itself). A page keeps SESSION where it keeps a token,
// and asks headers() for what each request needs.
//
// A user in several tenants picks one in the header's switcher; the choice
// is kept in this tab and sent as X-LinkForge-Tenant on every request (on
// the live feed, where a browser cannot set headers, as ?tenant=). A
// switch reloads the page: everything on it belongs to one tenant.
//
// Everything from the server is written as text, never as HTML.
'use strict';
window.LinkForgeAuth = (() => {
  const TOKEN_KEY = 'linkforge.token';
  const ROLE_KEY = TOKEN_KEY + '.role'; // where the dashboard keeps its role (showRole)
  const TENANT_KEY = 'linkforge.tenant';
  // SESSION stands for the cookie where a page keeps its token: no token
  // looks like it (they start with lf_).
  const SESSION = 'session-cookie';
  const ROLES = ['viewer', 'editor', 'owner']; // lowest first
  let me = null; // GET /api/v1/me of the session, or of the token once asked

  const isSession = (cred) => cred === SESSION;
  const tenant = () => sessionStorage.getItem(TENANT_KEY) || '';

  // headers are the credential's headers for a request of method.
  function headers(cred, method) {
    if (!isSession(cred)) return { Authorization: 'Bearer ' + cred };
    const h = {};
    if (tenant()) h['X-LinkForge-Tenant'] = tenant();
    if (method && method !== 'GET' && method !== 'HEAD' && me && me.csrf_token) h['X-CSRF-Token'] = me.csrf_token;
    return h;
  }

  async function askMe(h) {
    const resp = await fetch('/api/v1/me', { headers: Object.assign({ Accept: 'application/json' }, h), cache: 'no-store' });
    return { status: resp.status, body: resp.ok ? await resp.json().catch(() => null) : null };
  }

  // probe resolves to SESSION when the browser holds a live session
  // cookie, else null. A tenant this tab picked that the user has left is
  // forgotten (the server refuses it with 403), and the first one taken.
  async function probe() {
    me = null;
    let r;
    try {
      r = await askMe(headers(SESSION, 'GET'));
      if (r.status === 403 && tenant()) {
        sessionStorage.removeItem(TENANT_KEY);
        r = await askMe({});
      }
    } catch (err) {
      return null; // the server cannot be reached: the sign-in form says more
    }
    if (r.status !== 200 || !r.body || !r.body.user || !r.body.csrf_token) return null;
    me = r.body;
    sessionStorage.setItem(ROLE_KEY, me.role);
    return SESSION;
  }

  // whoami resolves to GET /api/v1/me of cred (asked once per page).
  async function whoami(cred) {
    if (me) return me;
    const r = await askMe(headers(cred, 'GET'));
    if (r.status === 200 && r.body) me = r.body;
    return me;
  }

  // liveURL and liveProtocols open the live feed with cred.
  function liveURL(cred) {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const q = isSession(cred) && tenant() ? '?tenant=' + encodeURIComponent(tenant()) : '';
    return `${proto}//${location.host}/api/v1/live${q}`;
  }
  function liveProtocols(cred) {
    return isSession(cred) ? ['linkforge.v1'] : ['linkforge.v1', 'bearer.' + cred];
  }

  // ended is what a page says when the server refuses cred: tokenMessage
  // for a token.
  function ended(cred, tokenMessage) {
    if (!isSession(cred)) return tokenMessage;
    me = null;
    return 'Your session has ended (signed out, or your access was changed). Sign in again.';
  }

  // end signs out: a token is just forgotten; a session ends on the server
  // (everywhere: every session of the user). Resolves to what to tell.
  async function end(cred, everywhere) {
    if (!isSession(cred)) return undefined;
    const h = headers(cred, 'POST');
    try {
      const resp = everywhere
        ? await fetch('/api/v1/me/sessions', { method: 'DELETE', headers: h, cache: 'no-store' })
        : await fetch('/logout', { method: 'POST', headers: h, cache: 'no-store' });
      if (!resp.ok && resp.status !== 401) return 'Signing out failed (HTTP ' + resp.status + '). Close the browser to be sure.';
    } catch (err) {
      return 'The server could not be reached: you may still be signed in.';
    }
    me = null;
    return everywhere ? 'Signed out on every device.' : 'Signed out.';
  }

  // leave is a page's Sign out button: the page forgets cred
  // (onSignOut), and once the server has ended the session (or the token
  // is forgotten) the browser goes to /login, the page to sign in again
  // from. A sign-out that failed stays on the page and says so.
  async function leave(cred, everywhere, onSignOut) {
    const message = await end(cred, everywhere);
    if (message && message !== 'Signed out.' && message !== 'Signed out on every device.') {
      onSignOut(message);
      return;
    }
    onSignOut();
    location.assign('/login');
  }

  // allowedRoles are the roles a caller of role may give (never above its own).
  function allowedRoles(role) {
    return ROLES.slice(0, ROLES.indexOf(role) + 1);
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // mount fills the page's header for cred (the menu is the server's,
  // menu.go): signed in by cookie, who is signed in, the tenant switcher
  // and "Sign out everywhere". onSignOut(message) returns the page to its sign-in
  // state.
  function mount(cred, onSignOut) {
    unmount();
    document.body.dataset.auth = isSession(cred) ? 'session' : 'token';
    const session = document.getElementById('session');
    const signout = document.getElementById('signout');
    const info = me;
    if (!isSession(cred) || !info || !session || !signout) return;
    const who = el('span', 'who muted small', info.user.email);
    who.dataset.authControl = '';
    session.insertBefore(who, signout);
    if (info.tenants.length > 1) {
      const label = el('label', 'sr-only', 'Tenant');
      label.htmlFor = 'tenant-pick';
      const pick = el('select', 'tenant-pick');
      pick.id = 'tenant-pick';
      for (const name of info.tenants) {
        const o = el('option', '', name);
        o.value = name;
        pick.append(o);
      }
      pick.value = info.tenant;
      pick.addEventListener('change', () => {
        sessionStorage.setItem(TENANT_KEY, pick.value);
        sessionStorage.removeItem(ROLE_KEY);
        // The same page afresh, in the other tenant: a link's view would
        // name a link of the old one.
        history.replaceState(null, '', location.pathname.startsWith('/dashboard/links/') ? '/dashboard' : location.pathname);
        location.reload();
      });
      label.dataset.authControl = '';
      pick.dataset.authControl = '';
      session.insertBefore(label, who);
      session.insertBefore(pick, who);
    }
    showInvitations(info.invitations || []);
    const all = el('button', 'btn btn-ghost', 'Sign out everywhere');
    all.type = 'button';
    all.id = 'signout-all';
    all.dataset.authControl = '';
    all.addEventListener('click', async () => {
      all.disabled = true;
      await leave(cred, true, onSignOut);
    });
    signout.after(all);
  }

  // showInvitations shows the user's pending invitations under the page's
  // header, each with Accept and Decline: another tenant's owner invited
  // this account, and it joins only by the user's own answer. An accepted
  // tenant becomes this tab's tenant.
  function showInvitations(list) {
    if (!list.length) return;
    const box = el('section', 'invitations');
    box.id = 'invitations';
    box.setAttribute('aria-label', 'Invitations');
    box.dataset.authControl = '';
    for (const inv of list) {
      const row = el('p', 'invitation');
      row.append(el('span', '', `You are invited to ${inv.tenant} as ${inv.role}. `));
      const answer = async (verb) => {
        for (const b of row.querySelectorAll('button')) b.disabled = true;
        try {
          const resp = await fetch(`/api/v1/me/invitations/${encodeURIComponent(inv.tenant)}/${verb}`,
            { method: 'POST', headers: headers(SESSION, 'POST'), cache: 'no-store' });
          if (!resp.ok) throw new Error('HTTP ' + resp.status);
        } catch (err) {
          row.append(el('span', 'error', ' Answering failed (' + err.message + '): try again.'));
          for (const b of row.querySelectorAll('button')) b.disabled = false;
          return;
        }
        if (verb === 'accept') {
          sessionStorage.setItem(TENANT_KEY, inv.tenant);
          sessionStorage.removeItem(ROLE_KEY);
          location.reload();
          return;
        }
        row.remove();
        if (!box.querySelector('.invitation')) box.remove();
      };
      const yes = el('button', 'btn', 'Accept');
      yes.type = 'button';
      yes.dataset.tenant = inv.tenant;
      yes.dataset.answer = 'accept';
      yes.addEventListener('click', () => answer('accept'));
      const no = el('button', 'btn btn-ghost', 'Decline');
      no.type = 'button';
      no.dataset.tenant = inv.tenant;
      no.dataset.answer = 'decline';
      no.addEventListener('click', () => answer('decline'));
      row.append(yes, ' ', no);
      box.append(row);
    }
    const header = document.querySelector('header');
    if (header) header.after(box);
    else document.body.prepend(box);
  }

  function unmount() {
    delete document.body.dataset.auth;
    for (const old of document.querySelectorAll('[data-auth-control]')) old.remove();
  }

  // client returns the API call of a page: JSON in and out with the
  // page's credential (getCred()) and its headers; a problem answer
  // becomes an Error carrying status and problem, and a 401 calls
  // onRefused with the page's sign-out message first. One copy for the
  // webhooks, domains and people pages.
  function client(getCred, onRefused) {
    return async function api(method, path, body) {
      const cred = getCred();
      const hdrs = Object.assign(headers(cred, method), { Accept: 'application/json' });
      if (body !== undefined) hdrs['Content-Type'] = 'application/json';
      const resp = await fetch(path, { method, headers: hdrs, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body) });
      if (resp.status === 204) return null;
      const data = await resp.json().catch(() => ({}));
      if (!resp.ok) {
        const err = new Error(data.detail || data.title || ('HTTP ' + resp.status));
        err.status = resp.status;
        err.problem = data;
        if (resp.status === 401) onRefused(ended(cred, 'The server refused this token. It may have been revoked.'));
        throw err;
      }
      return data;
    };
  }

  // problemText is what a page says of a failed call: the field errors of
  // a problem, its detail, or that the server cannot be reached.
  function problemText(err) {
    const p = err.problem || {};
    if (Array.isArray(p.errors) && p.errors.length) {
      return p.errors.map((e) => e.field + ': ' + e.detail).join('; ');
    }
    return err.status ? err.message : 'The server cannot be reached. Check your connection and try again.';
  }

  // el makes an element with a class and text: text, never HTML.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // page runs the sign-in of a dashboard page built like the audit,
  // alarms, import and tags pages: the token form (#token-form, #token,
  // #token-error, #signin), the session probe, #app, #nav, #session and
  // #signout. It reads the caller's role (GET /api/v1/me, for
  // body[data-role]), then load(api); a 403 there goes to forbidden, when
  // given, and the page is shown with what that says. clear empties the
  // page when it signs out. It returns the page's API call (client).
  function page({ load, forbidden, clear }) {
    const $ = (id) => document.getElementById(id);
    let cred = sessionStorage.getItem(TOKEN_KEY);
    const api = client(() => cred, (message) => signOut(message));

    async function start() {
      let who = null;
      try {
        who = await api('GET', '/api/v1/me');
        await load();
      } catch (err) {
        if (err.status === 401) return; // signed out, with the reason
        if (!(forbidden && err.status === 403)) {
          $('token-error').textContent = problemText(err);
          $('token-error').hidden = false;
          $('signin').hidden = false;
          return;
        }
        forbidden(err); // signed in, but the page's work is another role's
      }
      $('signin').hidden = true;
      $('app').hidden = false;
      $('nav').hidden = false;
      $('session').hidden = false;
      if (who && who.role) document.body.dataset.role = who.role;
      mount(cred, signOut);
    }

    function signOut(message) {
      sessionStorage.removeItem(TOKEN_KEY);
      me = null;
      unmount();
      cred = null;
      $('app').hidden = true;
      $('nav').hidden = true;
      $('session').hidden = true;
      if (clear) clear();
      $('token-error').textContent = message || '';
      $('token-error').hidden = !message;
      $('signin').hidden = false;
      $('token').focus();
    }

    $('signout').addEventListener('click', () => leave(cred, false, signOut));
    $('token-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      cred = $('token').value.trim();
      if (!cred) return;
      $('token').value = '';
      sessionStorage.setItem(TOKEN_KEY, cred);
      start();
    });
    if (cred) start();
    else probe().then((c) => { if (c) { cred = c; start(); } else $('signin').hidden = false; });
    // The credential and the sign-out, for a page's own fetch (a file's
    // upload or download).
    return Object.assign(api, { cred: () => cred, signOut });
  }

  // answers orders a list's loads: ask() numbers one; newest(n) says
  // whether its answer is the newest yet, and records it (an older answer,
  // arriving late, would replace newer rows); current(n) whether it is not
  // older than the one shown; dropAll() makes every load under way stale
  // (at sign-out, they are the signed-out caller's).
  function answers() {
    let asked = 0;
    let shown = 0;
    return {
      ask: () => ++asked,
      current: (n) => n >= shown,
      newest(n) {
        if (n < shown) return false;
        shown = n;
        return true;
      },
      dropAll() { shown = asked + 1; },
    };
  }

  return {
    SESSION,
    answers,
    page,
    TOKEN_KEY,
    headers,
    client,
    problemText,
    el,
    probe,
    whoami,
    liveURL,
    liveProtocols,
    ended,
    end,
    leave,
    allowedRoles,
    isSession,
    mount,
    // unmount forgets the session: the page is signed out.
    unmount: () => { me = null; unmount(); },
  };
})();

// The People page: the tenant's API tokens (create with a role, the secret
// shown once; list; revoke) and its users (invite, the one-time URL shown
// once; list; change a role; remove). Both are an owner's: another role is
// told so and offered nothing. The role lists offer no role above the
// caller's own; the server enforces both rules anyway.
//
// Signed in as the other pages are (session.js): a token of this tab, or
// the session cookie. Everything from the server is written as text
// (textContent), never as HTML.
'use strict';
(function () {
  const auth = window.LinkForgeAuth;
  const $ = (id) => document.getElementById(id);
  const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  let cred = null;
  let me = null;

  const api = auth.client(() => cred, (message) => signOut(message));
  const problemText = auth.problemText;
  const el = auth.el;

  function button(label, onClick, cls) {
    const b = el('button', cls || 'btn btn-ghost', label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  function when(iso) {
    return iso ? dateFmt.format(new Date(iso)) : 'never';
  }

  function showError(id, err) {
    $(id).textContent = err ? problemText(err) : '';
    $(id).hidden = !err;
  }

  // confirmIn replaces the actions cell's content with a question and
  // Yes / Cancel; Yes runs act.
  function confirmIn(cell, question, yes, act) {
    const before = Array.from(cell.childNodes);
    const q = el('span', 'small', question + ' ');
    const ok = button(yes, async () => {
      ok.disabled = true;
      await act();
    }, 'btn btn-danger');
    const no = button('Cancel', () => cell.replaceChildren(...before));
    cell.replaceChildren(q, ok, no);
    no.focus();
  }

  // Each table's loads are numbered; an answer older than the one shown
  // is dropped: the first list, answering after a create's or a revoke's
  // reload, would bring back the table as it was before.
  const loads = { tokens: auth.answers(), users: auth.answers() };

  function fillRoles(select, chosen) {
    select.replaceChildren();
    for (const r of auth.allowedRoles(me.role)) {
      const o = el('option', '', r);
      o.value = r;
      select.append(o);
    }
    select.value = chosen;
  }

  // ---------------------------------------------------------------- tokens

  async function loadTokens() {
    const n = loads.tokens.ask();
    let data;
    try {
      data = await api('GET', '/api/v1/tokens');
    } catch (err) {
      if (loads.tokens.current(n)) showError('tokens-error', err);
      return;
    }
    if (!loads.tokens.newest(n)) return;
    showError('tokens-error', null);
    const rows = (data.tokens || []).map(tokenRow);
    $('tokens').replaceChildren(...rows);
  }

  function tokenRow(tk) {
    const tr = el('tr', tk.revoked_at ? 'revoked' : '');
    tr.dataset.id = tk.id;
    tr.append(el('td', '', tk.name || '(no name)'), el('td', 'role', tk.role));
    const prefix = el('td');
    prefix.append(el('code', '', tk.prefix));
    tr.append(prefix, el('td', '', when(tk.created_at)));
    const state = el('td');
    state.append(el('span', 'badge ' + (tk.revoked_at ? 'badge-expired' : 'badge-active'), tk.revoked_at ? 'revoked' : 'active'));
    tr.append(state);
    const actions = el('td', 'actions');
    if (!tk.revoked_at) {
      actions.append(button('Revoke', () => confirmIn(actions, 'Revoke it?', 'Revoke', async () => {
        try {
          await api('DELETE', '/api/v1/tokens/' + encodeURIComponent(tk.id));
          showError('tokens-error', null);
        } catch (err) {
          showError('tokens-error', err);
        }
        await loadTokens();
      }), 'btn btn-danger revoke'));
    }
    tr.append(actions);
    return tr;
  }

  async function onTokenCreate(ev) {
    ev.preventDefault();
    showError('tok-error', null);
    $('tok-secret-box').hidden = true;
    const body = { role: $('tok-role').value };
    const name = $('tok-name').value.trim();
    if (name) body.name = name;
    const submit = ev.target.querySelector('button[type="submit"]');
    submit.disabled = true;
    try {
      const tk = await api('POST', '/api/v1/tokens', body);
      $('tok-secret').textContent = tk.token;
      $('tok-secret-box').hidden = false;
      $('tok-name').value = '';
      await loadTokens();
    } catch (err) {
      showError('tok-error', err);
    } finally {
      submit.disabled = false;
    }
  }

  // ---------------------------------------------------------------- users

  async function loadUsers() {
    const n = loads.users.ask();
    let data;
    try {
      data = await api('GET', '/api/v1/users');
    } catch (err) {
      if (loads.users.current(n)) showError('users-error', err);
      return;
    }
    if (!loads.users.newest(n)) return;
    showError('users-error', null);
    $('users').replaceChildren(...(data.users || []).map(userRow));
  }

  function userRow(u) {
    const tr = el('tr');
    tr.dataset.id = u.id;
    const email = el('td', 'email', u.email);
    if (me.user && me.user.id === u.id) email.append(el('span', 'muted small', ' (you)'));
    tr.append(email);
    const roleCell = el('td');
    const pick = el('select', 'role-pick');
    pick.setAttribute('aria-label', 'Role of ' + u.email);
    // A member above the caller's role is shown, not offered to change.
    if (auth.allowedRoles(me.role).includes(u.role)) {
      fillRoles(pick, u.role);
      pick.addEventListener('change', async () => {
        pick.disabled = true;
        try {
          await api('PATCH', '/api/v1/users/' + encodeURIComponent(u.id), { role: pick.value });
          showError('users-error', null);
        } catch (err) {
          showError('users-error', err);
        }
        await loadUsers();
      });
      roleCell.append(pick);
    } else {
      roleCell.textContent = u.role;
    }
    tr.append(roleCell, el('td', '', when(u.last_sign_in_at)));
    const actions = el('td', 'actions');
    actions.append(button('Remove', () => confirmIn(actions, 'Remove ' + u.email + ' from this tenant?', 'Remove', async () => {
      try {
        await api('DELETE', '/api/v1/users/' + encodeURIComponent(u.id));
        showError('users-error', null);
      } catch (err) {
        showError('users-error', err);
      }
      await loadUsers();
    }), 'btn btn-danger remove'));
    tr.append(actions);
    return tr;
  }

  async function onInvite(ev) {
    ev.preventDefault();
    showError('user-error', null);
    $('invite-box').hidden = true;
    const submit = ev.target.querySelector('button[type="submit"]');
    submit.disabled = true;
    try {
      const u = await api('POST', '/api/v1/users', { email: $('user-email').value.trim(), role: $('user-role').value });
      if (u.invite_url) {
        $('invite-text').textContent = 'Send this link to ' + u.email + ', shown this once: it sets their password, once, until ' + when(u.invite_expires_at) + '.';
        $('invite-url').textContent = u.invite_url;
        $('invite-row').hidden = false;
      } else {
        $('invite-text').textContent = u.email + ' has a password already: they are a member now, and sign in as usual.';
        $('invite-row').hidden = true;
      }
      $('invite-box').hidden = false;
      $('user-email').value = '';
      await loadUsers();
    } catch (err) {
      showError('user-error', err);
    } finally {
      submit.disabled = false;
    }
  }

  async function copyFrom(id, b) {
    try {
      await navigator.clipboard.writeText($(id).textContent);
      b.textContent = 'Copied';
    } catch (err) {
      const range = document.createRange();
      range.selectNodeContents($(id));
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      b.textContent = 'Selected: copy it';
    }
  }

  // ---------------------------------------------------------------- session

  async function start(c) {
    cred = c;
    me = await auth.whoami(cred).catch(() => null);
    if (!me) {
      signOut(auth.ended(cred, 'The server refused this token. It may have been revoked.'));
      return;
    }
    document.body.dataset.role = me.role;
    $('signin').hidden = true;
    $('app').hidden = false;
    $('nav').hidden = false;
    $('session').hidden = false;
    auth.mount(cred, signOut);
    $('people-sub').textContent = 'Tenant ' + me.tenant + ' · your role: ' + me.role;
    $('my-role').textContent = me.role;
    $('not-owner').hidden = me.role === 'owner';
    if (me.role !== 'owner') return;
    fillRoles($('tok-role'), 'editor');
    fillRoles($('user-role'), 'editor');
    await Promise.all([loadTokens(), loadUsers()]);
  }

  function signOut(message) {
    sessionStorage.removeItem(auth.TOKEN_KEY);
    sessionStorage.removeItem(auth.TOKEN_KEY + '.role');
    auth.unmount();
    cred = null;
    me = null;
    delete document.body.dataset.role;
    $('app').hidden = true;
    $('nav').hidden = true;
    $('session').hidden = true;
    $('tokens').replaceChildren();
    $('users').replaceChildren();
    // A list still on its way is the signed-out caller's: dropped.
    loads.tokens.dropAll();
    loads.users.dropAll();
    $('tok-secret').textContent = '';
    $('tok-secret-box').hidden = true;
    $('invite-url').textContent = '';
    $('invite-box').hidden = true;
    $('signin').hidden = false;
    $('token-error').textContent = message || '';
    $('token-error').hidden = !message;
    $('token').focus();
  }

  function init() {
    $('token-create').addEventListener('submit', onTokenCreate);
    $('user-invite').addEventListener('submit', onInvite);
    $('tok-copy').addEventListener('click', (ev) => copyFrom('tok-secret', ev.target));
    $('invite-copy').addEventListener('click', (ev) => copyFrom('invite-url', ev.target));
    $('signout').addEventListener('click', () => auth.leave(cred, false, signOut));
    $('token-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const token = $('token').value.trim();
      if (!token) return;
      $('token').value = '';
      if (!(await auth.whoami(token).catch(() => null))) {
        signOut('This token was not accepted. Check that it is complete and not revoked.');
        return;
      }
      sessionStorage.setItem(auth.TOKEN_KEY, token);
      start(token);
    });
    const token = sessionStorage.getItem(auth.TOKEN_KEY);
    if (token) start(token);
    else auth.probe().then((c) => { if (c) start(c); else signOut(); });
  }

  init();
})();

// The tags page: every tag of the tenant with its number of links; an
// editor renames one (onto an existing tag: the two merge) or removes it
// from every link, with PATCH and DELETE /api/v1/tags/{name}. Everything
// from the server is written as text (textContent).
'use strict';
(function () {
  const TOKEN_KEY = 'linkforge.token';
  const $ = (id) => document.getElementById(id);
  const auth = window.LinkForgeAuth;
  let token = sessionStorage.getItem(TOKEN_KEY);

  const api = auth.client(() => token, (message) => signOut(message));
  const problemText = auth.problemText;
  const el = auth.el;
  const fmt = new Intl.NumberFormat();

  function showError(err) {
    if (err.status === 401) return;
    $('tags-error').textContent = err.status === 403 ? 'Only an editor or an owner can change tags.' : problemText(err);
    $('tags-error').hidden = false;
  }

  function button(label, onClick, action) {
    const b = el('button', 'btn btn-ghost', label);
    b.type = 'button';
    b.dataset.action = action;
    b.addEventListener('click', () => onClick(b));
    return b;
  }

  async function loadTags() {
    const data = await api('GET', '/api/v1/tags');
    const body = $('tags');
    body.textContent = '';
    for (const t of data.tags) body.append(tagRow(t));
    $('tags-empty').hidden = data.tags.length > 0;
  }

  function tagRow(t) {
    const tr = el('tr');
    tr.dataset.tag = t.tag;
    const name = el('td');
    name.append(el('span', 'tag', t.tag));
    const actions = el('td', 'actions');
    actions.dataset.needs = 'editor';
    actions.append(button('Rename', () => startRename(tr, t), 'rename'), button('Delete', (b) => confirmDelete(tr, t, b), 'delete'));
    tr.append(name, el('td', 'num', fmt.format(t.links)), actions);
    return tr;
  }

  // startRename turns the row's name into a small form.
  function startRename(tr, t) {
    const form = el('form', 'tag-rename');
    const label = el('label', 'sr-only', 'New name of ' + t.tag);
    const input = el('input');
    input.id = 'rename-' + t.tag;
    label.htmlFor = input.id;
    input.value = t.tag;
    input.maxLength = 64;
    input.spellcheck = false;
    const save = el('button', 'btn btn-small', 'Save');
    save.type = 'submit';
    form.append(label, input, save);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = input.value.trim();
      if (!name || name === t.tag) { await loadTags().catch(showError); return; }
      save.disabled = true;
      try {
        await api('PATCH', '/api/v1/tags/' + encodeURIComponent(t.tag), { name });
        $('tags-error').hidden = true;
        await loadTags();
      } catch (err) {
        save.disabled = false;
        showError(err);
      }
    });
    tr.children[0].replaceChildren(form);
    input.focus();
  }

  // confirmDelete asks once in the row, then removes the tag everywhere.
  function confirmDelete(tr, t, b) {
    if (b.dataset.armed !== 'true') {
      b.dataset.armed = 'true';
      b.textContent = `Remove from ${fmt.format(t.links)} ${t.links === 1 ? 'link' : 'links'}?`;
      return;
    }
    b.disabled = true;
    api('DELETE', '/api/v1/tags/' + encodeURIComponent(t.tag))
      .then(() => { $('tags-error').hidden = true; return loadTags(); })
      .catch((err) => { b.disabled = false; showError(err); });
  }

  async function start() {
    let me;
    try {
      me = await api('GET', '/api/v1/me');
      await loadTags();
    } catch (err) {
      if (err.status === 401) return; // signed out, with the reason
      $('token-error').textContent = problemText(err);
      $('token-error').hidden = false;
      $('signin').hidden = false;
      return;
    }
    $('signin').hidden = true;
    $('app').hidden = false;
    $('nav').hidden = false;
    $('session').hidden = false;
    document.body.dataset.role = me.role; // a viewer's rows have no buttons (dashboard.css)
    auth.mount(token, signOut);
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    auth.unmount();
    token = null;
    $('app').hidden = true;
    $('nav').hidden = true;
    $('session').hidden = true;
    $('tags').textContent = '';
    $('token-error').textContent = message || '';
    $('token-error').hidden = !message;
    $('signin').hidden = false;
    $('token').focus();
  }

  function init() {
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

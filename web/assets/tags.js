// The tags page: every tag of the tenant with its number of links; an
// editor renames one (onto an existing tag: the two merge) or removes it
// from every link, with PATCH and DELETE /api/v1/tags/{name}. Everything
// from the server is written as text (textContent).
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const auth = window.LinkForgeAuth;

  // The page's sign-in, role and API calls (session.js); set in init.
  let api;
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

  function init() {
    api = auth.page({ load: loadTags, clear: () => { $('tags').textContent = ''; } });
  }
  init();
})();

// The import and export page: import a file (format, a preview of its
// first lines, then the per-line report), create many links from pasted
// lines (POST /api/v1/bulk/links), and download the links (CSV, JSON) or
// the daily click counts (CSV, by range and traffic). Files go up and come
// down with the page's credential; everything from the server is written
// as text (textContent).
'use strict';
(function () {
  const PREVIEW_LINES = 5;
  const $ = (id) => document.getElementById(id);
  const auth = window.LinkForgeAuth;

  // The page's sign-in, role and API calls (session.js); set in init.
  let api;
  const problemText = auth.problemText;
  const el = auth.el;

  function showError(id, err) {
    if (err.status === 401) return;
    $(id).textContent = err.status === 403 ? 'Your role cannot do this: ask an editor or an owner of your team.' : problemText(err);
    $(id).hidden = false;
  }

  // send is fetch with the page's credential; a problem answer throws as
  // the API client's errors do.
  async function send(method, path, body, contentType) {
    const hdrs = auth.headers(api.cred(), method);
    if (contentType) hdrs['Content-Type'] = contentType;
    const resp = await fetch(path, { method, headers: hdrs, cache: 'no-store', body });
    if (!resp.ok) {
      const data = await resp.json().catch(() => ({}));
      const err = new Error(data.detail || data.title || ('HTTP ' + resp.status));
      err.status = resp.status;
      err.problem = data;
      if (resp.status === 401) api.signOut(auth.ended(api.cred(), 'The server refused this token. It may have been revoked.'));
      throw err;
    }
    return resp;
  }

  // download saves what path answers as name.
  async function download(path, name) {
    $('export-error').hidden = true;
    try {
      const blob = await (await send('GET', path)).blob();
      const a = el('a');
      a.href = URL.createObjectURL(blob);
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 60000);
    } catch (err) {
      showError('export-error', err);
    }
  }

  async function onPreview() {
    const f = $('import-file').files[0];
    const pre = $('import-preview');
    if (!f) {
      pre.hidden = true;
      return;
    }
    // The format follows the name at once: set after the read, it could
    // come after an Import pressed meanwhile (a JSON file sent as CSV).
    if (/\.json$/i.test(f.name) && $('import-format').value === 'csv') $('import-format').value = 'json';
    const head = await f.slice(0, 64 * 1024).text();
    pre.textContent = head.split(/\r?\n/).slice(0, PREVIEW_LINES).join('\n');
    pre.hidden = false;
  }

  async function onImport(ev) {
    ev.preventDefault();
    const f = $('import-file').files[0];
    $('import-error').hidden = true;
    if (!f) {
      $('import-error').textContent = 'Choose a file first.';
      $('import-error').hidden = false;
      return;
    }
    $('import-submit').disabled = true;
    try {
      const resp = await send('POST', '/api/v1/import?format=' + encodeURIComponent($('import-format').value), f,
        f.type || 'application/octet-stream');
      const r = await resp.json();
      $('import-summary').textContent = `${r.created} created, ${r.skipped} skipped (the slug exists), ${r.failed} failed.`;
      const body = $('import-errors');
      body.textContent = '';
      for (const e of r.errors || []) {
        const tr = el('tr');
        tr.append(el('td', 'num', String(e.line)), el('td', 'audit-target', problemText({ status: e.problem.status, message: e.problem.detail, problem: e.problem })));
        body.append(tr);
      }
      body.closest('.table-wrap').hidden = body.children.length === 0;
      $('import-report').hidden = false;
    } catch (err) {
      showError('import-error', err);
    } finally {
      $('import-submit').disabled = false;
    }
  }

  async function onBulk(ev) {
    ev.preventDefault();
    $('bulk-error').hidden = true;
    const lines = $('bulk-lines').value.split('\n').map((l) => l.trim()).filter((l) => l);
    if (!lines.length) {
      $('bulk-error').textContent = 'Paste at least one URL.';
      $('bulk-error').hidden = false;
      return;
    }
    const links = lines.map((l) => {
      const [url, slug] = l.split(/\s+/);
      return slug ? { url, slug } : { url };
    });
    $('bulk-submit').disabled = true;
    try {
      const data = await api('POST', '/api/v1/bulk/links', { links });
      const list = $('bulk-results');
      list.textContent = '';
      data.results.forEach((r, i) => {
        const li = el('li', r.link ? 'io-ok' : 'io-bad');
        li.textContent = r.link ? r.link.short_url + ' → ' + r.link.url
          : lines[i] + ': ' + problemText({ status: r.status, message: r.problem.detail, problem: r.problem });
        list.append(li);
      });
      list.hidden = false;
    } catch (err) {
      showError('bulk-error', err);
    } finally {
      $('bulk-submit').disabled = false;
    }
  }

  function onStats(ev) {
    ev.preventDefault();
    const q = new URLSearchParams();
    if ($('stats-from').value) q.set('from', $('stats-from').value + 'T00:00:00Z');
    if ($('stats-to').value) q.set('to', $('stats-to').value + 'T00:00:00Z');
    if ($('stats-traffic').value) q.set('traffic', $('stats-traffic').value);
    download('/api/v1/stats/export' + (q.size ? '?' + q.toString() : ''), 'linkforge-clicks.csv');
  }

  function init() {
    $('import-file').addEventListener('change', () => onPreview().catch((err) => showError('import-error', err)));
    $('import-form').addEventListener('submit', onImport);
    $('bulk-form').addEventListener('submit', onBulk);
    $('export-csv').addEventListener('click', () => download('/api/v1/export?format=csv', 'linkforge-links.csv'));
    $('export-json').addEventListener('click', () => download('/api/v1/export?format=json', 'linkforge-links.json'));
    $('stats-form').addEventListener('submit', onStats);
    api = auth.page({ load: async () => {} });
  }
  init();
})();

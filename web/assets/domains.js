// The domains page: add a domain of the tenant's own, see whether it is
// verified and whether its certificate is ready, run its verification now,
// make it the default domain, remove it. It uses the admin API with the
// token the dashboard keeps in this tab's session storage, or asks for
// one. Everything from the server is written as text (textContent), never
// as HTML.
'use strict';
(function () {
  const TOKEN_KEY = 'linkforge.token';
  const $ = (id) => document.getElementById(id);
  // A token, or auth.SESSION when signed in by cookie (session.js).
  const auth = window.LinkForgeAuth;
  let token = sessionStorage.getItem(TOKEN_KEY);

  const api = auth.client(() => token, (message) => signOut(message));
  const problemText = auth.problemText;
  const el = auth.el;

  function button(label, onClick, action) {
    const b = el('button', 'btn btn-ghost', label);
    b.type = 'button';
    b.dataset.action = action;
    b.addEventListener('click', () => onClick(b));
    return b;
  }

  // What each state means, for the badge's tooltip; the class is the
  // dashboard's badge colour.
  const STATES = {
    verified: ['badge-active', 'Verified: the domain redirects.'],
    pending: ['badge-pending', 'Waiting for its verification (the TXT record, or the verification URL), retried hourly; removed after 7 days pending. It redirects nothing yet.'],
  };
  const TLS = {
    ready: ['badge-active', 'A certificate is ready: short URLs are https://.'],
    pending: ['badge-pending', 'The certificate is issued on the first HTTPS request.'],
    failed: ['badge-expired', 'The last issuance failed; it is tried again.'],
    off: ['badge-expiring', 'No certificate: the server runs without --tls auto, or the domain is not verified. Short URLs are http://.'],
  };

  function badge(table, value) {
    const [cls, title] = table[value] || ['badge-pending', ''];
    const b = el('span', 'badge ' + cls, value);
    if (title) b.title = title;
    return b;
  }

  async function loadDomains() {
    const data = await api('GET', '/api/v1/domains');
    const body = $('domains');
    body.textContent = '';
    for (const d of data.domains) body.append(domainRow(d));
    $('domains-empty').hidden = data.domains.length > 0;
  }

  function domainRow(d) {
    const tr = el('tr');
    tr.dataset.host = d.host;
    tr.dataset.state = d.state;
    tr.dataset.tls = d.tls;
    const host = el('td', 'dom-host');
    host.append(el('span', '', d.host));
    if (d.root_url) host.append(el('div', 'muted small', 'root → ' + d.root_url));
    if (d.not_found_url) host.append(el('div', 'muted small', 'not found → ' + d.not_found_url));
    const verif = el('td');
    verif.append(badge(STATES, d.state));
    if (d.state !== 'verified' && d.verification_record) {
      // --domain-verify dns: the record the tenant must create.
      const rec = el('div', 'dom-verify dom-txt muted small', 'TXT ' + d.verification_record + ' = ');
      rec.append(el('span', 'dom-token', d.verification_token));
      verif.append(rec);
    } else if (d.state !== 'verified' && d.verification_url) {
      // Where the server looks: the first thing to check when it stays pending.
      verif.append(el('div', 'dom-verify muted small', d.verification_url));
    }
    const tls = el('td');
    tls.append(badge(TLS, d.tls));
    const def = el('td', 'dom-default', d.default ? 'default' : '');
    const actions = el('td', 'actions');
    actions.dataset.needs = 'owner'; // the server refuses the others (people.css hides them)
    if (d.state !== 'verified') actions.append(button('Verify now', (b) => onVerify(d, b), 'verify'));
    if (!d.default) actions.append(button('Make default', (b) => onDefault(d, b), 'default'));
    actions.append(button('App links', () => openAppLinks(d), 'applinks'));
    actions.append(button('Remove', (b) => onRemove(d, b), 'remove'));
    tr.append(host, verif, tls, def, actions);
    return tr;
  }

  function showListError(err) {
    $('domains-error').textContent = problemText(err);
    $('domains-error').hidden = false;
  }

  // act runs one row action with its button disabled, then shows the list
  // as the server has it.
  async function act(btn, fn) {
    $('domains-error').hidden = true;
    btn.disabled = true;
    try {
      await fn();
    } catch (err) {
      showListError(err);
    } finally {
      btn.disabled = false;
    }
    await loadDomains().catch(showListError);
  }

  function hostPath(d) {
    return '/api/v1/domains/' + encodeURIComponent(d.host);
  }

  function onVerify(d, btn) {
    return act(btn, () => api('POST', hostPath(d) + '/verify'));
  }

  function onDefault(d, btn) {
    return act(btn, () => api('PATCH', hostPath(d), { default: true }));
  }

  function onRemove(d, btn) {
    if (!confirm('Remove ' + d.host + '? Its short URLs stop working. A domain with links cannot be removed.')) return undefined;
    return act(btn, () => api('DELETE', hostPath(d)));
  }

  // The domain's deep-link documents (apple-app-site-association and
  // assetlinks.json), edited as JSON text; empty clears one.
  let appLinksHost = null;

  function openAppLinks(d) {
    appLinksHost = d.host;
    clearFields($('applinks-form'));
    $('applinks-host').textContent = d.host;
    const text = (v) => (v === null || v === undefined ? '' : JSON.stringify(v, null, 2));
    $('aasa').value = text(d.apple_app_site_association);
    $('assetlinks').value = text(d.asset_links);
    $('applinks-status').textContent = '';
    $('applinks').hidden = false;
    $('aasa').focus();
  }

  async function onAppLinks(ev) {
    ev.preventDefault();
    const form = ev.target;
    clearFields(form);
    const body = {};
    const bad = [];
    for (const [id, name] of [['aasa', 'apple_app_site_association'], ['assetlinks', 'asset_links']]) {
      const v = $(id).value.trim();
      if (!v) { body[name] = null; continue; }
      try {
        body[name] = JSON.parse(v);
      } catch (err) {
        bad.push({ field: name, detail: 'is not JSON: ' + err.message });
      }
    }
    if (bad.length) {
      markFields(form, { problem: { errors: bad } });
      return;
    }
    $('applinks-submit').disabled = true;
    $('applinks-status').textContent = 'Saving…';
    try {
      await api('PATCH', '/api/v1/domains/' + encodeURIComponent(appLinksHost), body);
      $('applinks-status').textContent = 'Saved.';
      await loadDomains();
    } catch (err) {
      $('applinks-status').textContent = markFields(form, err).join('; ');
    } finally {
      $('applinks-submit').disabled = false;
    }
  }

  function clearFields(form) {
    for (const i of form.querySelectorAll('[aria-invalid]')) i.removeAttribute('aria-invalid');
    for (const p of form.querySelectorAll('.field-error')) { p.hidden = true; p.textContent = ''; }
  }

  // markFields writes each field error of the problem next to its input;
  // it returns those the form has no place for.
  function markFields(form, err) {
    const left = [];
    const errors = (err.problem && Array.isArray(err.problem.errors)) ? err.problem.errors : [];
    for (const f of errors) {
      const input = form.querySelector(`[name="${CSS.escape(f.field)}"]`);
      // An item's error (target_schemes[1]) shows beside its list.
      const slot = form.querySelector(`.field-error[data-field="${CSS.escape(f.field)}"]`) ||
        form.querySelector(`.field-error[data-field="${CSS.escape(f.field.replace(/\[\d+\]$/, ''))}"]`);
      if (input) input.setAttribute('aria-invalid', 'true');
      if (slot) {
        slot.textContent = f.detail;
        slot.hidden = false;
      } else {
        left.push(f.field + ': ' + f.detail);
      }
    }
    return errors.length ? left : [problemText(err)];
  }

  async function onCreate(ev) {
    ev.preventDefault();
    const form = ev.target;
    const errEl = $('domain-error');
    errEl.hidden = true;
    clearFields(form);
    const body = { host: $('dom-host').value.trim() };
    for (const [id, name] of [['dom-root', 'root_url'], ['dom-notfound', 'not_found_url']]) {
      const v = $(id).value.trim();
      if (v) body[name] = v;
    }
    $('domain-submit').disabled = true;
    try {
      await api('POST', '/api/v1/domains', body);
      form.reset();
      await loadDomains();
    } catch (err) {
      const left = markFields(form, err);
      if (left.length) {
        errEl.textContent = left.join('; ');
        errEl.hidden = false;
      }
    } finally {
      $('domain-submit').disabled = false;
    }
  }

  // The tenant's extra target schemes (PATCH /api/v1/tenant), for owners:
  // mailto:, tel: and app links. The field and its button stay disabled
  // until the current list is in: typing into it earlier would be
  // overwritten by the answer, and a save would send the wrong list.
  async function loadSchemes() {
    const t = await api('GET', '/api/v1/tenant');
    $('schemes').value = (t.target_schemes || []).join(', ');
    $('schemes').disabled = false;
    $('schemes-submit').disabled = false;
    $('schemes-form').dataset.loaded = 'true';
  }

  async function onSchemes(ev) {
    ev.preventDefault();
    const form = ev.target;
    clearFields(form);
    const list = $('schemes').value.split(',').map((x) => x.trim()).filter((x) => x);
    $('schemes-submit').disabled = true;
    $('schemes-status').textContent = 'Saving…';
    try {
      const t = await api('PATCH', '/api/v1/tenant', { target_schemes: list });
      $('schemes').value = (t.target_schemes || []).join(', ');
      $('schemes-status').textContent = 'Saved.';
    } catch (err) {
      const left = markFields(form, err);
      $('schemes-status').textContent = left.join('; ');
    } finally {
      $('schemes-submit').disabled = false;
    }
  }

  async function start() {
    // The caller's role: an owner's controls are hidden from the others
    // (people.css), who read that only an owner changes domains. Asked
    // with the list and known before the page shows: learnt after, the
    // owner's forms appeared above the list a moment later and moved its
    // rows and buttons under the pointer.
    const role = api('GET', '/api/v1/me').then((me) => me.role, () => sessionStorage.getItem(TOKEN_KEY + '.role'));
    try {
      await loadDomains();
    } catch (err) {
      if (err.status === 401) return; // signed out, with the reason
      $('token-error').textContent = problemText(err);
      $('token-error').hidden = false;
      $('signin').hidden = false;
      return;
    }
    const r = await role;
    if (r) document.body.dataset.role = r;
    $('signin').hidden = true;
    $('app').hidden = false;
    $('nav').hidden = false;
    $('session').hidden = false;
    auth.mount(token, signOut);
    loadSchemes().catch((err) => { $('schemes-status').textContent = problemText(err); });
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    auth.unmount();
    token = null;
    $('app').hidden = true;
    $('nav').hidden = true;
    $('session').hidden = true;
    $('domains').textContent = '';
    // The next sign-in's tenant has its own schemes: disabled until read.
    $('schemes').value = '';
    $('schemes').disabled = true;
    $('schemes-submit').disabled = true;
    delete $('schemes-form').dataset.loaded;
    $('token-error').textContent = message || '';
    $('token-error').hidden = !message;
    $('signin').hidden = false;
    $('token').focus();
  }

  function init() {
    $('domain-form').addEventListener('submit', onCreate);
    $('schemes-form').addEventListener('submit', onSchemes);
    $('applinks-form').addEventListener('submit', onAppLinks);
    $('applinks-close').addEventListener('click', () => { $('applinks').hidden = true; });
    $('domains-refresh').addEventListener('click', () => loadDomains().catch(showListError));
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

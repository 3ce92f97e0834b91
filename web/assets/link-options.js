// The dashboard's link options, beside dashboard.js (which calls the hooks
// of window.LinkForgeOptions):
//
// - the domain picker of the create form: the tenant's verified domains
//   (GET /api/v1/domains, read when the overview shows) and the public
//   host; the edit form names the link's domain (a link keeps it);
// - the People / Automated / All switch, People by default: the chart and
//   the all-time total take the stats' human or automated counts and the
//   feed's (its messages carry each minute's human clicks; dashboard.js
//   says how they are added), the breakdowns and top links traffic=;
// - the edit form's routing: redirect status (with the warning about the
//   caching of 301 and 308), query forwarding, an ordered rules editor,
//   A/B variants with their counts (GET .../stats/variant) and the social
//   card with a preview;
// - the UTM parameters, filled by hand or from one of the tenant's
//   templates (GET /api/v1/utm-templates), and the overview's Campaigns
//   table (GET /api/v1/stats/campaigns, the range and traffic of the
//   breakdowns).
//
// Everything from the server or the form is written as text
// (textContent, value, attributes), never as HTML; the card's image is
// shown only for an https: URL (the page's CSP admits no other).
'use strict';
window.LinkForgeOptions = (() => {
  const TRAFFIC_KEY = 'linkforge.traffic';
  const TRAFFIC = { '': 'All', human: 'People', automated: 'Automated' };
  const CONDITIONS = ['device', 'os', 'browser', 'language', 'country', 'query', 'ip', 'before', 'after'];
  const HINTS = {
    device: 'desktop, mobile, tablet', os: 'ios, android, windows…', browser: 'chrome, safari, firefox…',
    language: 'de or de-CH', country: 'DE', query: 'key or key=value', ip: '203.0.113.0/24',
    before: '2026-12-24T00:00:00Z', after: '2026-12-01T00:00:00Z',
  };
  const MAX_RULES = 20;
  const MAX_CONDITIONS = 10;
  const MAX_VARIANTS = 10;
  const $ = (id) => document.getElementById(id);
  let dash = null; // the dashboard's api, linkURL, domainParam, onTraffic
  let domains = null; // the tenant's domains, once read
  let domainsGen = 0;
  // People unless the browser kept another choice ('' is All).
  let traffic = 'human';
  const AUTOMATED_MEANS = 'Automated: crawlers, HTTP libraries and scripts, uptime monitors, headless browsers, prefetches and email-link scanners; link previews are not counted at all.';
  let variantsGen = 0;
  const UTM_KEYS = ['source', 'medium', 'campaign', 'term', 'content'];
  let templates = null; // the tenant's UTM templates, once read
  let campaignsGen = 0;
  try {
    const t = localStorage.getItem(TRAFFIC_KEY);
    if (t !== null && t in TRAFFIC) traffic = t;
  } catch (err) { /* no storage: People */ }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function smallButton(label, title, onClick) {
    const b = el('button', 'btn btn-small btn-ghost', label);
    b.type = 'button';
    b.title = title;
    // A word is its own name (WCAG 2.5.3: the name holds the visible
    // text, so that voice control finds it); an arrow is named by title.
    if (!/[A-Za-z]/.test(label)) b.setAttribute('aria-label', title);
    b.addEventListener('click', onClick);
    return b;
  }

  function slot(field) {
    const p = el('p', 'field-error');
    p.dataset.field = field;
    p.hidden = true;
    return p;
  }

  // edited tells the dashboard the edit form changed (it then keeps the
  // form's input when the link changes elsewhere), as typing does.
  function edited() {
    $('edit-form').dispatchEvent(new Event('input', { bubbles: true }));
  }

  // ---------------------------------------------------------------- domains

  // loadDomains reads the tenant's domains for the picker, once per
  // sign-in; a viewer or an old server without domains keeps the default.
  async function loadDomains() {
    if (domains !== null || !dash) return;
    const gen = ++domainsGen;
    let list = [];
    try {
      const data = await dash.api('GET', '/api/v1/domains');
      list = (data && data.domains) || [];
    } catch (err) {
      list = [];
    }
    if (gen !== domainsGen) return; // signed out meanwhile
    domains = list;
    renderPicker();
  }

  function renderPicker() {
    const sel = $('create-domain');
    const verified = (domains || []).filter((d) => d.state === 'verified');
    const def = verified.find((d) => d.default);
    const keep = sel.value;
    const first = el('option', '', 'Default: ' + (def ? def.host : 'the public host'));
    first.value = '';
    const opts = [first];
    // The public host by name when a domain is the default: the page's
    // own host, unless that is one of the tenant's domains.
    const here = location.hostname;
    if (def && !(domains || []).some((d) => d.host === here)) {
      const o = el('option', '', here + ' (public host)');
      o.value = here;
      opts.push(o);
    }
    for (const d of verified) {
      if (d === def) continue;
      const o = el('option', '', d.host);
      o.value = d.host;
      opts.push(o);
    }
    sel.replaceChildren(...opts);
    sel.value = opts.some((o) => o.value === keep) ? keep : '';
    $('create-domain-row').hidden = opts.length < 2;
  }

  // ---------------------------------------------------------------- traffic

  function renderTraffic() {
    for (const b of $('traffic-seg').querySelectorAll('button')) {
      b.setAttribute('aria-pressed', String(b.dataset.traffic === traffic));
    }
    // One short line, not a paragraph in the header: what the switch
    // keeps, with what "automated" means in its tooltip.
    const note = $('traffic-note');
    note.hidden = false;
    note.title = AUTOMATED_MEANS;
    $('traffic-what').textContent = { '': 'All traffic', human: 'People only', automated: 'Automated only' }[traffic];
  }

  // setTraffic switches the traffic filter to t, as its button would.
  function setTraffic(t) {
    if (!(t in TRAFFIC) || t === traffic) return;
    traffic = t;
    try { localStorage.setItem(TRAFFIC_KEY, traffic); } catch (err) { /* kept for this page */ }
    renderTraffic();
    if (dash) dash.onTraffic();
  }

  function onTrafficClick(ev) {
    const b = ev.target.closest('button[data-traffic]');
    if (b) setTraffic(b.dataset.traffic);
  }

  // ---------------------------------------------------------------- rules

  function conditionRow(c, i, j) {
    const li = el('li', 'cond');
    const type = el('select');
    type.name = `rules[${i}].conditions[${j}].type`;
    type.setAttribute('aria-label', 'Condition type');
    for (const t of CONDITIONS) {
      const o = el('option', '', t);
      o.value = t;
      type.append(o);
    }
    if (!CONDITIONS.includes(c.type)) {
      const o = el('option', '', c.type); // a type this page does not know: kept
      o.value = c.type;
      type.append(o);
    }
    type.value = c.type;
    const value = el('input');
    value.type = 'text';
    value.spellcheck = false;
    value.name = `rules[${i}].conditions[${j}].value`;
    value.setAttribute('aria-label', 'Condition value');
    value.value = c.value;
    value.placeholder = HINTS[c.type] || '';
    type.addEventListener('change', () => { value.placeholder = HINTS[type.value] || ''; });
    const remove = smallButton('×', 'Remove this condition', () => changeRules((rs) => { rs[i].conditions.splice(j, 1); }));
    remove.dataset.action = 'remove-condition';
    li.append(type, value, remove, slot(`rules[${i}].conditions[${j}].type`), slot(`rules[${i}].conditions[${j}].value`));
    return li;
  }

  function ruleRow(r, i, n) {
    const li = el('li', 'rule');
    const head = el('div', 'rule-head');
    head.append(el('span', 'rule-n', 'Rule ' + (i + 1)));
    const up = smallButton('↑', 'Move this rule up', () => changeRules((rs) => { rs.splice(i - 1, 0, rs.splice(i, 1)[0]); }));
    up.dataset.action = 'up';
    up.disabled = i === 0;
    const down = smallButton('↓', 'Move this rule down', () => changeRules((rs) => { rs.splice(i + 1, 0, rs.splice(i, 1)[0]); }));
    down.dataset.action = 'down';
    down.disabled = i === n - 1;
    const remove = smallButton('Remove', 'Remove this rule', () => changeRules((rs) => { rs.splice(i, 1); }));
    remove.dataset.action = 'remove-rule';
    head.append(up, down, remove);
    const conds = el('ul', 'cond-list');
    r.conditions.forEach((c, j) => conds.append(conditionRow(c, i, j)));
    const addCond = smallButton('Add condition', 'Add a condition to this rule', () => changeRules((rs) => {
      rs[i].conditions.push({ type: 'country', value: '' });
    }));
    addCond.dataset.action = 'add-condition';
    addCond.disabled = r.conditions.length >= MAX_CONDITIONS;
    const url = el('input');
    url.type = 'url';
    url.inputMode = 'url';
    url.name = `rules[${i}].url`;
    url.placeholder = 'https://example.com/de';
    url.setAttribute('aria-label', 'Rule ' + (i + 1) + ': destination URL');
    url.value = r.url;
    const urlLabel = el('div', 'rule-to muted small', 'then go to');
    li.append(head, conds, addCond, slot(`rules[${i}].conditions`), urlLabel, url, slot(`rules[${i}].url`), slot(`rules[${i}]`));
    return li;
  }

  function renderRules(rules) {
    const list = $('rules-list');
    list.replaceChildren(...rules.map((r, i) => ruleRow(r, i, rules.length)));
    $('rule-add').disabled = rules.length >= MAX_RULES;
  }

  // readRules is the editor's rules, as the API takes them.
  function readRules() {
    return Array.from($('rules-list').children).map((li) => ({
      conditions: Array.from(li.querySelectorAll('.cond')).map((c) => ({
        type: c.querySelector('select').value, value: c.querySelector('input').value.trim(),
      })),
      url: li.querySelector('input[type="url"]').value.trim(),
    }));
  }

  function changeRules(fn) {
    const rules = readRules();
    fn(rules);
    renderRules(rules);
    edited();
  }

  // ---------------------------------------------------------------- variants

  function variantRow(v, i, counts) {
    const li = el('li', 'variant');
    li.append(el('span', 'variant-n', String.fromCharCode(65 + i)));
    const url = el('input');
    url.type = 'url';
    url.inputMode = 'url';
    url.name = `variants[${i}].url`;
    url.placeholder = 'https://example.com/' + String.fromCharCode(97 + i);
    url.setAttribute('aria-label', 'Variant ' + String.fromCharCode(65 + i) + ': URL');
    url.value = v.url;
    const weight = el('input', 'variant-weight');
    weight.type = 'number';
    weight.min = '1';
    weight.max = '100';
    weight.step = '1';
    weight.name = `variants[${i}].weight`;
    weight.setAttribute('aria-label', 'Variant ' + String.fromCharCode(65 + i) + ': weight');
    weight.value = String(v.weight);
    const count = el('span', 'variant-count muted small', counts && i in counts ? counts[i] : '');
    count.dataset.variant = String(i);
    const remove = smallButton('×', 'Remove this variant', () => changeVariants((vs) => { vs.splice(i, 1); }));
    remove.dataset.action = 'remove-variant';
    li.append(url, weight, count, remove, slot(`variants[${i}].url`), slot(`variants[${i}].weight`), slot(`variants[${i}]`));
    return li;
  }

  function renderVariants(variants, counts) {
    $('variants-list').replaceChildren(...variants.map((v, i) => variantRow(v, i, counts)));
    $('variant-add').disabled = variants.length >= MAX_VARIANTS;
  }

  function readVariants() {
    return Array.from($('variants-list').children).map((li) => {
      const w = li.querySelector('.variant-weight');
      // A weight that is no number goes as typed: the server names it.
      const weight = w.value !== '' && !w.validity.badInput ? Number(w.value) : w.value;
      return { url: li.querySelector('input[type="url"]').value.trim(), weight };
    });
  }

  function changeVariants(fn) {
    const vs = readVariants();
    fn(vs);
    renderVariants(vs, null); // the counts are the stored variants': shown again after a save
    $('variants-counts').hidden = true;
    edited();
  }

  // loadVariantCounts shows each stored variant's clicks since the link
  // was made, from the variant dimension (flushed clicks).
  async function loadVariantCounts(l) {
    const gen = ++variantsGen;
    const from = new Date(Math.floor(l.created / 3600000) * 3600000).toISOString();
    let data;
    try {
      data = await dash.api('GET', `/api/v1/links/${encodeURIComponent(l.slug)}/stats/variant?from=${encodeURIComponent(from)}&limit=100${dash.domainParam(l.slug)}`);
    } catch (err) {
      return; // a viewer without stats, an old server: no counts
    }
    if (gen !== variantsGen || $('edit-form').dataset.slug !== l.slug) return;
    const counts = {};
    for (const v of (data && data.values) || []) {
      if (/^\d+$/.test(v.value)) counts[Number(v.value)] = v.count;
    }
    const fmt = new Intl.NumberFormat();
    let total = 0;
    for (const span of $('variants-list').querySelectorAll('.variant-count')) {
      const n = counts[Number(span.dataset.variant)] || 0;
      total += n;
      span.textContent = fmt.format(n) + ' clicks';
    }
    const p = $('variants-counts');
    p.textContent = 'Clicks per variant since the link was made: ' + fmt.format(total) + ' in all (flushed every 30 s).';
    p.hidden = false;
  }

  // ---------------------------------------------------------------- card

  function readOG() {
    const og = {};
    const title = $('edit-og-title').value.trim();
    const description = $('edit-og-description').value.trim();
    const image = $('edit-og-image').value.trim();
    if (title) og.title = title;
    if (description) og.description = description;
    if (image) og.image_url = image;
    return Object.keys(og).length ? og : null;
  }

  // renderPreview draws the card a link preview would show. The image is
  // set as an attribute, and only for an https: URL.
  function renderPreview() {
    const og = readOG() || {};
    const slug = $('edit-form').dataset.slug || '';
    const short = $('manage-short').textContent;
    let host = '';
    try { host = new URL(short).host; } catch (err) { host = ''; }
    $('og-preview-host').textContent = host;
    $('og-preview-title').textContent = og.title || ('/' + slug);
    $('og-preview-description').textContent = og.description || '';
    const img = $('og-preview-img');
    let src = '';
    try {
      const u = new URL(og.image_url || '');
      if (u.protocol === 'https:') src = u.href;
    } catch (err) { src = ''; }
    if (src) {
      if (img.getAttribute('src') !== src) img.setAttribute('src', src);
      img.hidden = false;
    } else {
      img.removeAttribute('src');
      img.hidden = true;
    }
  }

  // ---------------------------------------------------------------- hooks

  function redirectWarning() {
    const v = $('edit-redirect').value;
    $('edit-redirect-warning').hidden = !(v === '301' || v === '308');
  }

  function fillEdit(l) {
    const r = l.routing || { redirect_status: 302, forward_query: false, rules: [], variants: [], og: null };
    $('edit-domain').textContent = l.domain || '';
    $('edit-redirect').value = String(r.redirect_status || 302);
    redirectWarning();
    $('edit-forward').checked = !!r.forward_query;
    renderRules(r.rules.map((x) => ({ url: x.url, conditions: (x.conditions || []).map((c) => ({ type: c.type, value: c.value })) })));
    renderVariants(r.variants.map((v) => ({ url: v.url, weight: v.weight })), null);
    $('variants-counts').hidden = true;
    const og = r.og || {};
    $('edit-og-title').value = og.title || '';
    $('edit-og-description').value = og.description || '';
    $('edit-og-image').value = og.image_url || '';
    renderPreview();
    if (r.variants.length) loadVariantCounts(l);
    fillUTM(r.utm);
    loadTemplates();
  }

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  function editPatch(l, body) {
    const r = l.routing;
    const status = Number($('edit-redirect').value);
    if (status !== r.redirect_status) body.redirect_status = status;
    if ($('edit-forward').checked !== r.forward_query) body.forward_query = $('edit-forward').checked;
    const rules = readRules();
    const stored = r.rules.map((x) => ({ conditions: (x.conditions || []).map((c) => ({ type: c.type, value: c.value })), url: x.url }));
    if (!same(rules, stored)) body.rules = rules.length ? rules : null;
    const variants = readVariants();
    if (!same(variants, r.variants.map((v) => ({ url: v.url, weight: v.weight })))) body.variants = variants.length ? variants : null;
    const og = readOG();
    const was = r.og ? readOGOf(r.og) : null;
    if (!same(og, was)) body.og = og;
    const utm = readUTM();
    if (!same(utm, r.utm ? UTM_KEYS.reduce((u, k) => (r.utm[k] ? { ...u, [k]: r.utm[k] } : u), null) : null)) body.utm = utm;
  }

  // readUTM is the form's UTM: the values set, null when none is.
  function readUTM() {
    const u = {};
    for (const k of UTM_KEYS) {
      const v = $('edit-utm-' + k).value.trim();
      if (v) u[k] = v;
    }
    return Object.keys(u).length ? u : null;
  }

  function fillUTM(u) {
    for (const k of UTM_KEYS) $('edit-utm-' + k).value = (u && u[k]) || '';
  }

  async function loadTemplates() {
    if (templates !== null || !dash) return;
    let list = [];
    try {
      const data = await dash.api('GET', '/api/v1/utm-templates');
      list = (data && data.templates) || [];
    } catch (err) {
      list = [];
    }
    templates = list;
    const sel = $('edit-utm-template');
    const first = el('option', '', list.length ? 'Choose a template' : 'No templates yet');
    first.value = '';
    sel.replaceChildren(first, ...list.map((t) => {
      const o = el('option', '', t.name);
      o.value = t.id;
      return o;
    }));
  }

  function onTemplatePick() {
    const sel = $('edit-utm-template');
    const t = (templates || []).find((x) => x.id === sel.value);
    if (!t) return;
    fillUTM(t.utm);
    sel.value = '';
    edited();
  }

  // campaigns shows the Campaigns table of q (the range and traffic), or
  // hides it (q null: a link's view); a range without campaign clicks
  // hides it too, so that an empty tenant sees no empty table.
  async function campaigns(q) {
    const gen = ++campaignsGen;
    const section = $('campaigns');
    if (!section) return;
    if (q === null || !dash) {
      section.hidden = true;
      return;
    }
    let rows = [];
    try {
      const data = await dash.api('GET', '/api/v1/stats/campaigns?' + q);
      rows = (data && data.campaigns) || [];
    } catch (err) {
      rows = [];
    }
    if (gen !== campaignsGen) return; // a newer range won
    $('campaigns-body').replaceChildren(...rows.map((r) => {
      const tr = el('tr');
      tr.append(el('td', '', r.campaign), el('td', '', r.source || '–'), el('td', '', r.medium || '–'),
        el('td', 'num', String(r.links)), el('td', 'num', String(r.clicks)));
      return tr;
    }));
    section.hidden = rows.length === 0;
  }

  function readOGOf(o) {
    const og = {};
    if (o.title) og.title = o.title;
    if (o.description) og.description = o.description;
    if (o.image_url) og.image_url = o.image_url;
    return Object.keys(og).length ? og : null;
  }

  function createBody(body) {
    const d = $('create-domain').value;
    if (d) body.domain = d;
  }

  function attach(d) {
    dash = d;
    renderTraffic();
    $('traffic-seg').addEventListener('click', onTrafficClick);
    $('edit-redirect').addEventListener('change', redirectWarning);
    for (const id of ['edit-og-title', 'edit-og-description', 'edit-og-image']) $(id).addEventListener('input', renderPreview);
    $('rule-add').addEventListener('click', () => changeRules((rs) => {
      rs.push({ conditions: [{ type: 'country', value: '' }], url: '' });
    }));
    $('variant-add').addEventListener('click', () => changeVariants((vs) => {
      // A test needs two: the first add of none makes a pair.
      if (vs.length === 0) vs.push({ url: '', weight: 50 });
      vs.push({ url: '', weight: 50 });
    }));
    // The preview's image failed (blocked, gone): no broken image.
    $('og-preview-img').addEventListener('error', () => { $('og-preview-img').hidden = true; });
    $('edit-utm-template').addEventListener('change', onTemplatePick);
  }

  function reset() {
    domains = null;
    domainsGen++;
    variantsGen++;
    templates = null;
    campaignsGen++;
    $('campaigns').hidden = true;
    const sel = $('create-domain');
    const first = el('option', '', 'Default domain');
    first.value = '';
    sel.replaceChildren(first);
    $('create-domain-row').hidden = true;
  }

  return {
    attach,
    reset,
    overview: loadDomains,
    createBody,
    fillEdit,
    editPatch,
    campaigns,
    // isDefaultDomain reports whether host is where links go without a
    // domain: the default domain, else the public host (not a domain of
    // the tenant); true while the domains are not read.
    isDefaultDomain: (host) => {
      if (domains === null) return true;
      const def = domains.find((d) => d.default && d.state === 'verified');
      return def ? def.host === host : !domains.some((d) => d.host === host);
    },
    traffic: () => traffic,
    setTraffic,
    trafficQuery: () => (traffic ? '&traffic=' + traffic : ''),
    // count is o's count under the switch: key (count, total) for All.
    count: (o, key) => (traffic ? (o[traffic] || 0) : (o[key] || 0)),
  };
})();

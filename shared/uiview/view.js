// The view side of the MCP Apps bridge (SEP-1865, protocol 2026-01-26):
// JSON-RPC 2.0 over postMessage with the host (window.parent). The view
// sends ui/initialize then ui/notifications/initialized, renders each
// ui/notifications/tool-result it is sent (a whole CallToolResult), follows
// the host's locale and theme (host-context-changed) and reports its size
// (ui/notifications/size-changed). It renders the same markup as the
// server's templates, building every node with textContent: user content
// is never parsed as markup.
(function () {
  'use strict';
  var PROTOCOL = '2026-01-26';
  var MARKER = '\n__VP_TOOL_RESULT__';
  var root = document.querySelector('.vp-root');
  var primitive = root.getAttribute('data-vp-primitive');
  var texts = readJSON('vp-texts') || {};
  var items = readJSON('vp-data'); // the server-rendered list, or null
  var errorText = null;
  var lang = texts[document.documentElement.lang] ? document.documentElement.lang : 'en';
  var statuses = {todo: 1, in_progress: 1, review: 1, blocked: 1, done: 1, cancelled: 1, brainstorm: 1, plan: 1, execute: 1, validate: 1, complete: 1};

  function readJSON(id) {
    var node = document.getElementById(id);
    try { return node ? JSON.parse(node.textContent) : null; } catch (e) { return null; }
  }

  function t(key) {
    var table = texts[lang] || texts.en || {};
    var v = table[primitive + '.' + key];
    return v !== undefined ? v : (table[key] !== undefined ? table[key] : key);
  }
  function count(n) {
    var form = (n === 1 || (n === 0 && lang === 'fr')) ? 'one' : 'other';
    return t(form).replace('%d', String(n));
  }
  function label(prefix, v) {
    var table = texts[lang] || {};
    return table[prefix + v] !== undefined ? table[prefix + v] : str(v);
  }
  function str(v) { return v === undefined || v === null ? '' : String(v); }
  function num(f) { return String(Math.round(Number(f) * 100) / 100); }
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function when(ms) {
    var d = new Date(Number(ms));
    if (isNaN(d.getTime())) { return ''; }
    return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate()) + ' ' +
      pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ' UTC';
  }
  function iso(ms) {
    var d = new Date(Number(ms));
    return isNaN(d.getTime()) ? '' : d.toISOString();
  }

  // el builds an element; children are nodes or strings (text nodes).
  function el(tag, attrs) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'class') { node.className = attrs[k]; } else { node.setAttribute(k, attrs[k]); }
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) { continue; }
      node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return node;
  }
  function sr(text) { return el('span', {'class': 'vp-sr'}, text + ' '); }
  function statusClass(s) { return statuses[s] ? 'vp-status-' + s : 'vp-status-other'; }
  function list(tag, attrs, values, cls) {
    var node = el(tag, attrs);
    (values || []).forEach(function (v) { node.appendChild(el('li', cls ? {'class': cls} : {}, str(v))); });
    return node;
  }
  function has(l) { return Array.isArray(l) && l.length > 0; }

  var render = {
    'tasks-table': function (rows) {
      var head = el('tr', {});
      ['col.title', 'col.status', 'col.priority', 'col.assignedTo'].forEach(function (k) {
        head.appendChild(el('th', {scope: 'col'}, t(k)));
      });
      var body = el('tbody', {});
      rows.forEach(function (r) {
        body.appendChild(el('tr', {}, el('td', {}, str(r.title)),
          el('td', {}, el('span', {'class': 'vp-badge ' + statusClass(r.status)}, label('status.', r.status))),
          el('td', {}, r.priority ? label('priority.', r.priority) : ''), el('td', {}, str(r.assignedTo))));
      });
      return el('table', {'class': 'vp-table'}, el('caption', {'class': 'vp-sr'}, t('title')), el('thead', {}, head), body,
        el('tfoot', {}, el('tr', {}, el('td', {colspan: '4'}, count(rows.length)))));
    },
    'messages-feed': function (rows) {
      var ul = el('ul', {'class': 'vp-feed', 'aria-label': t('title')});
      rows.forEach(function (m) {
        ul.appendChild(el('li', {'class': 'vp-card'},
          el('p', {'class': 'vp-meta'}, sr(t('from')), el('strong', {'class': 'vp-who'}, str(m.from)), ' ',
            el('time', {datetime: iso(m.createdAt)}, when(m.createdAt)),
            m.channel ? ' ' : null,
            m.channel ? el('span', {'class': 'vp-badge vp-channel'}, sr(t('channel')), str(m.channel)) : null),
          el('p', {'class': 'vp-text'}, str(m.content))));
      });
      return ul;
    },
    'diary-entry': function (rows) {
      var div = el('div', {'class': 'vp-stack'});
      rows.forEach(function (e) {
        div.appendChild(el('article', {'class': 'vp-card'},
          el('h2', {'class': 'vp-h2'}, el('time', {datetime: str(e.date)}, str(e.date)), ' ',
            el('span', {'class': 'vp-badge vp-orch'}, sr(t('orchestrator')), str(e.orchestrator))),
          el('p', {'class': 'vp-text'}, str(e.content)),
          has(e.highlights) ? el('h3', {'class': 'vp-h3'}, t('highlights')) : null,
          has(e.highlights) ? list('ul', {'class': 'vp-list'}, e.highlights) : null,
          has(e.blockers) ? el('h3', {'class': 'vp-h3'}, t('blockers')) : null,
          has(e.blockers) ? list('ul', {'class': 'vp-list'}, e.blockers) : null));
      });
      return div;
    },
    'mission-timeline': function (rows) {
      var ol = el('ol', {'class': 'vp-timeline', 'aria-label': t('title')});
      rows.forEach(function (m) {
        var meta = el('p', {'class': 'vp-meta'},
          el('span', {'class': 'vp-badge ' + statusClass(m.status)}, sr(t('col.status')), label('status.', m.status)));
        if (m.project) { meta.appendChild(document.createTextNode(' ')); meta.appendChild(el('span', {}, el('span', {'class': 'vp-label'}, t('project')), ' ' + str(m.project))); }
        if (m.pilot) { meta.appendChild(document.createTextNode(' ')); meta.appendChild(el('span', {}, el('span', {'class': 'vp-label'}, t('pilot')), ' ' + str(m.pilot))); }
        if (m.priority) { meta.appendChild(document.createTextNode(' ')); meta.appendChild(el('span', {'class': 'vp-chip'}, sr(t('col.priority')), label('priority.', m.priority))); }
        var li = el('li', {'class': 'vp-card vp-mission'}, el('h2', {'class': 'vp-h2'}, str(m.name)), meta);
        if (typeof m.progress === 'number') {
          var p = num(m.progress);
          li.appendChild(el('p', {'class': 'vp-meta'}, el('span', {'class': 'vp-label'}, t('progress')), ' ',
            el('progress', {'class': 'vp-progress', max: '100', value: p, 'aria-label': t('progress')}, p + '%'), ' ' + p + '%'));
        }
        ol.appendChild(li);
      });
      return ol;
    },
    'briefing-note': function (rows) {
      var div = el('div', {'class': 'vp-stack'});
      rows.forEach(function (n) {
        div.appendChild(el('article', {'class': 'vp-card'},
          el('p', {'class': 'vp-meta'}, el('span', {'class': 'vp-badge vp-topic'}, sr(t('topic')), str(n.topic))),
          el('h2', {'class': 'vp-h2'}, str(n.title)),
          has(n.participants) ? list('ul', {'class': 'vp-chips', 'aria-label': t('participants')}, n.participants, 'vp-chip') : null,
          n.content ? el('p', {'class': 'vp-text'}, str(n.content)) : null));
      });
      return div;
    },
    'memory-quote': function (rows) {
      var ul = el('ul', {'class': 'vp-stack', 'aria-label': t('title')});
      rows.forEach(function (m) {
        ul.appendChild(el('li', {}, el('blockquote', {'class': 'vp-card vp-quote'},
          el('p', {'class': 'vp-meta'}, el('span', {'class': 'vp-badge vp-ns'}, sr(t('namespace')), str(m.namespace)), ' ',
            el('span', {'class': 'vp-chip'}, sr(t('type')), str(m.type)),
            typeof m.score === 'number' ? ' ' : null,
            typeof m.score === 'number' ? el('span', {'class': 'vp-score'}, t('score') + ' ' + num(m.score)) : null),
          el('p', {'class': 'vp-text'}, str(m.content)))));
      });
      return ul;
    }
  };

  // paint redraws the labels and the content from items / errorText.
  function paint() {
    document.documentElement.lang = lang;
    document.title = t('title') + ' — VantagePeers';
    document.getElementById('vp-title').textContent = t('title');
    var status = document.getElementById('vp-status');
    var content = document.getElementById('vp-content');
    var next;
    if (errorText !== null) {
      status.textContent = t('failed');
      next = el('div', {'class': 'vp-error', role: 'alert'}, el('strong', {'class': 'vp-error-title'}, t('error')), ' ',
        el('span', {'class': 'vp-error-msg'}, errorText));
    } else if (items === null) {
      if (content.firstElementChild) { return; } // the server's error box, kept
      status.textContent = t('waiting');
      return;
    } else {
      status.textContent = count(items.length);
      next = items.length === 0 ? el('p', {'class': 'vp-empty'}, t('empty')) : render[primitive](items);
    }
    while (content.firstChild) { content.removeChild(content.firstChild); }
    content.appendChild(next);
  }

  // itemsOf extracts the view's list from a tool's JSON result: a page
  // ({items}), search results ({results}), or one diary entry / note.
  function itemsOf(v) {
    if (!v || typeof v !== 'object') { return null; }
    if (Array.isArray(v.items)) { return v.items; }
    if (Array.isArray(v.results)) { return v.results; }
    if ((primitive === 'diary-entry' || primitive === 'briefing-note') && !Array.isArray(v)) { return [v]; }
    return null;
  }
  function textOf(res) {
    return (res.content || []).filter(function (c) { return c && c.type === 'text'; })
      .map(function (c) { return str(c.text); }).join('');
  }
  function onToolResult(res) {
    if (!res || typeof res !== 'object') { return; }
    var text = textOf(res);
    if (res.isError) {
      items = null; errorText = text || t('failed');
      paint();
      return;
    }
    var got = itemsOf(res.structuredContent);
    if (got === null && text) {
      var cut = text.indexOf(MARKER); // the UI marker follows the JSON (§15.3)
      try { got = itemsOf(JSON.parse(cut >= 0 ? text.slice(0, cut) : text)); } catch (e) { got = null; }
    }
    if (got === null) { items = null; errorText = t('badResult'); } else { items = got; errorText = null; }
    paint();
  }
  function onHostContext(ctx) {
    if (!ctx || typeof ctx !== 'object') { return; }
    if (typeof ctx.locale === 'string') {
      var l = ctx.locale.toLowerCase().slice(0, 2);
      lang = texts[l] ? l : 'en';
    }
    if (ctx.theme === 'dark' || ctx.theme === 'light') {
      root.setAttribute('data-theme', ctx.theme);
      document.body.setAttribute('data-theme', ctx.theme);
    }
    paint();
  }

  // ---- the bridge ----
  var host = window.parent !== window ? window.parent : null;
  var nextId = 1;
  var pending = {};
  var ready = false;
  function send(msg) { if (host) { host.postMessage(msg, '*'); } }
  function request(method, params, done) {
    var id = nextId++;
    pending[id] = done;
    send({jsonrpc: '2.0', id: id, method: method, params: params});
  }
  function notify(method, params) { send({jsonrpc: '2.0', method: method, params: params}); }

  window.addEventListener('message', function (ev) {
    if (!host || ev.source !== host) { return; }
    var m = ev.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') { return; }
    if (m.method === undefined && m.id !== undefined) {
      var done = pending[m.id];
      delete pending[m.id];
      if (done) { done(m.error ? null : m.result, m.error); }
      return;
    }
    var params = m.params || {};
    switch (m.method) {
      case 'ui/notifications/tool-result': onToolResult(params); break;
      case 'ui/notifications/tool-input':
      case 'ui/notifications/tool-input-partial':
        if (items === null && errorText === null) { document.getElementById('vp-status').textContent = t('loading'); }
        break;
      case 'ui/notifications/tool-cancelled':
        items = null; errorText = str(params.reason) || t('failed'); paint(); break;
      case 'ui/notifications/host-context-changed': onHostContext(params); break;
      case 'ui/resource-teardown':
      case 'ping':
        if (m.id !== undefined) { send({jsonrpc: '2.0', id: m.id, result: {}}); }
        break;
      default:
        if (m.id !== undefined) { send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'method not found: ' + m.method}}); }
    }
  });

  var lastW = -1;
  var lastH = -1;
  function reportSize() {
    if (!ready) { return; }
    // The content's size, not the iframe's: the host fits the frame to it.
    var box = root.getBoundingClientRect();
    var w = Math.ceil(box.width);
    var h = Math.ceil(box.height);
    if (w === lastW && h === lastH) { return; }
    lastW = w; lastH = h;
    notify('ui/notifications/size-changed', {width: w, height: h});
  }

  if (host) {
    request('ui/initialize', {
      protocolVersion: PROTOCOL,
      appInfo: {name: 'vantagepeers-' + primitive, version: '1'},
      appCapabilities: {}
    }, function (result) {
      if (result && result.hostContext) { onHostContext(result.hostContext); }
      notify('ui/notifications/initialized', {});
      ready = true;
      reportSize();
    });
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(reportSize).observe(root);
    }
  }
  // A server-rendered page is shown as the server wrote it until the host
  // sends a result or a locale; a shell says it is waiting.
  if (!document.getElementById('vp-content').firstElementChild) { paint(); }
}());

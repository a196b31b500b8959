// The Pacerelle web app: the person's device in a browser. It follows the
// flow of shared/pacerelle/requester (pair, send, fetch after a cursor,
// follow the doorbell) with the cryptography of pcr.js. Keys stay in
// IndexedDB: the Ed25519 key is a non-extractable CryptoKey; the X-Wing
// secret and the relay credential are stored encrypted under a
// non-extractable AES-GCM key of the same database. Everything received
// is shown with textContent, never as HTML.
import * as pcr from "./pcr.js";

const T = JSON.parse(document.getElementById("pc-strings").textContent);
const lang = document.documentElement.lang;
const API = "/pacerelle/v1";
const te = new TextEncoder();
const td = new TextDecoder();
const $ = (id) => document.getElementById(id);

function status(text, error = false) {
  const el = $("pc-status");
  el.textContent = text;
  el.classList.toggle("pc-error", error);
}

function hex(n) {
  return Array.from(crypto.getRandomValues(new Uint8Array(n)), (c) => c.toString(16).padStart(2, "0")).join("");
}

// party names as the relay makes them (vp.NormalizeOrchestrator, close
// enough for ids without special case folding).
const normalize = (s) => s.trim().normalize("NFC").toLowerCase();

// ---- IndexedDB

function openDB() {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open("pacerelle", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("devices", { keyPath: "key" });
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

async function store(mode, fn) {
  const db = await openDB();
  return new Promise((resolve, reject) => {
    const tx = db.transaction("devices", mode);
    const req = fn(tx.objectStore("devices"));
    tx.oncomplete = () => resolve(req?.result);
    tx.onerror = () => reject(tx.error);
  });
}

const allDevices = () => store("readonly", (s) => s.getAll());
const saveDevice = (rec) => store("readwrite", (s) => s.put(rec));

async function lock(rec, secret) {
  rec.iv = crypto.getRandomValues(new Uint8Array(12));
  rec.sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: rec.iv }, rec.wrapKey, te.encode(JSON.stringify(secret))));
}

async function unlock(rec) {
  const secret = JSON.parse(td.decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: rec.iv }, rec.wrapKey, rec.sealed)));
  const me = await pcr.identityFrom(rec.party, rec.deviceId, rec.signPair, pcr.unb64(secret.kemSeed));
  return { me, credential: secret.credential };
}

// ---- the relay API

async function api(bearer, method, path, body) {
  const res = await fetch(API + path, {
    method,
    headers: { Authorization: "Bearer " + bearer, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    credentials: "omit",
    cache: "no-store",
  });
  const out = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(out.error || res.status + " " + res.statusText);
  return out;
}

// ---- pairing

// waitAnswer polls this device's pairing until the agent answered its
// commitment, and checks the answer is the agent device's, for this very
// commitment.
async function waitAnswer(credential, agent, commit, agentDev) {
  const want = pcr.b64(commit);
  for (const deadline = Date.now() + 120000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 400))) {
    const { pairings } = await api(credential, "GET", "/pairings?v=" + pcr.PAIRING_VERSION);
    const p = pairings.find((x) => x.agent === agent && x.agentNonce);
    if (!p) continue;
    if (p.commit !== want) throw new Error("the relay shows an answer to another commitment: nothing was trusted");
    const n = pcr.unb64(p.agentNonce);
    await pcr.checkAnswer(agentDev, commit, n, pcr.unb64(p.answerSig));
    return n;
  }
  throw new Error(T.js_no_answer);
}

function pairPage() {
  const form = $("pc-pair-form");
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const token = $("pc-token").value.trim();
    const person = $("pc-person").value.trim();
    const agentId = $("pc-agent").value.trim();
    const deviceId = $("pc-device").value.trim();
    $("pc-start").disabled = true;
    status(T.js_pairing);
    try {
      const me = await pcr.newIdentity("person:" + normalize(person), deviceId);
      // The first version comes from the clock: the relay keeps a party's
      // newest list, so a re-pairing must be newer than the last one.
      const list = await pcr.signList(me, Date.now(), [me.device]);
      // Pairing v2: commit to this device and a fresh nonce first; reveal
      // the nonce only once the agent answered with its own (pcr.js).
      const nonce = pcr.newPairingNonce();
      const commit = await pcr.commitment(me.device, nonce);
      const started = await api(token, "POST", "/pairings",
        { agent: agentId, person, version: pcr.PAIRING_VERSION, device: me.device, list, commit: pcr.b64(commit) });
      $("pc-token").value = "";
      const agentList = started.agentList;
      if (!agentList || agentList.devices?.length !== 1 || agentList.party !== started.agent) throw new Error("the agent's device list is not usable");
      await pcr.verifyList(agentList, agentList);
      const agentDev = agentList.devices[0];
      status(T.js_waiting_answer);
      const agentNonce = await waitAnswer(started.credential, started.agent, commit, agentDev);
      await api(started.credential, "POST", "/pairings/reveal", { agent: started.agent, nonce: pcr.b64(nonce) });
      $("pc-code").textContent = await pcr.pairingCode(me.device, nonce, agentDev, agentNonce);
      $("pc-fingerprint").textContent = await pcr.fingerprint(agentDev);
      form.hidden = true;
      $("pc-code-box").hidden = false;
      status("");
      $("pc-code-heading").setAttribute("tabindex", "-1");
      $("pc-code-heading").focus();
      const decide = () => new Promise((resolve) => {
        $("pc-confirm").onclick = () => resolve(true);
        $("pc-reject").onclick = () => resolve(false);
      });
      if (!(await decide())) {
        $("pc-code-box").hidden = true;
        status(T.js_rejected, true);
        return;
      }
      $("pc-confirm").disabled = $("pc-reject").disabled = true;
      const sig = await pcr.sign(me, pcr.CONFIRM_LABEL, pcr.pairingTranscript(me.device, nonce, agentDev, agentNonce));
      await api(started.credential, "POST", "/pairings/confirm", { agent: started.agent, sig: pcr.b64(sig) });
      const wrapKey = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
      const rec = {
        key: started.party + "/" + started.agent, party: started.party, deviceId, agent: started.agent, agentId,
        signPair: me.signPair, wrapKey, pins: { [agentList.party]: agentList }, ownList: list, seen: [], cursor: 0,
        conversation: "web-" + hex(4), history: [],
      };
      await lock(rec, { kemSeed: pcr.b64(me.kemSeed), credential: started.credential });
      await saveDevice(rec);
      $("pc-code-box").hidden = true;
      status(T.js_paired);
      const a = document.createElement("a");
      a.href = "/pacerelle/app/chat?lang=" + lang;
      a.id = "pc-open-chat";
      a.textContent = T.js_open_chat;
      $("pc-status").append(" ", a);
    } catch (e) {
      status(T.js_error + e.message, true);
      form.hidden = false;
      $("pc-start").disabled = false;
    }
  });
}

// ---- requests and replies

function chatPage() {
  let rec, me, credential, bell, busy = Promise.resolve();
  const select = $("pc-device-select");
  const conv = $("pc-conversation");

  function render() {
    const ol = $("pc-messages");
    ol.replaceChildren();
    for (const m of rec?.history ?? []) if (m.conversation === conv.value) ol.append(item(m));
  }

  function item(m) {
    const li = document.createElement("li");
    li.className = "pc-msg " + (m.mine ? "pc-msg-mine" : "pc-msg-agent");
    li.dataset.kind = m.kind;
    li.dataset.id = m.id;
    const who = document.createElement("span");
    who.className = "pc-msg-who";
    who.textContent = m.mine ? T.js_you : T.js_agent;
    li.append(who);
    if (m.kind === "widget") {
      li.classList.add("pc-widget");
      li.append(widget(m));
    } else {
      li.append(document.createTextNode(m.text ?? ""));
    }
    return li;
  }

  function widget(m) {
    const box = document.createElement("div");
    const w = m.widget ?? {};
    const spec = w.spec ?? {};
    const title = document.createElement("p");
    title.className = "pc-widget-title";
    title.textContent = String(spec.title ?? spec.question ?? T.js_widget_confirm);
    box.append(title);
    if (spec.body || spec.description) {
      const p = document.createElement("p");
      p.textContent = String(spec.body ?? spec.description);
      box.append(p);
    }
    if (w.kind !== "confirm") return box;
    if (m.answer !== undefined) {
      const p = document.createElement("p");
      p.className = "pc-widget-answer";
      p.textContent = T.js_answered + (m.answer ? T.js_yes : T.js_no);
      box.append(p);
      return box;
    }
    const actions = document.createElement("p");
    actions.className = "pc-actions";
    actions.setAttribute("role", "group");
    actions.setAttribute("aria-label", title.textContent);
    for (const [label, value] of [[T.js_yes, true], [T.js_no, false]]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "pc-button" + (value ? "" : " pc-secondary");
      b.dataset.answer = String(value);
      b.textContent = label;
      b.onclick = () => queue(async () => {
        await send({ kind: "widget_response", widgetId: w.id, value: { confirmed: value }, sourceMessageId: m.id, replyToMessageId: m.id }, "wr-");
        m.answer = value;
        await saveDevice(rec);
        render();
      });
      actions.append(b);
    }
    box.append(actions);
    return box;
  }

  // queue runs the steps one at a time: the record is one state.
  function queue(fn) {
    busy = busy.then(fn).catch((e) => status(T.js_error + e.message, true));
    return busy;
  }

  async function send(payload, prefix) {
    const id = prefix + hex(8);
    const env = await pcr.seal(me, { to: [rec.agent], conversation: conv.value, messageId: id, listVersion: rec.ownList.version, sentAtMs: Date.now() },
      rec.pins[rec.agent].devices, te.encode(JSON.stringify(payload)));
    await api(credential, "POST", "/messages", { id, conversation: conv.value, to: [rec.agent], envelope: pcr.b64(pcr.encodeEnvelope(env)) });
    return id;
  }

  async function refreshList(party) {
    const l = await api(credential, "GET", "/lists/" + encodeURIComponent(party));
    const cur = rec.pins[party];
    if (!cur || l.version <= cur.version) throw new Error("no newer device list of " + party);
    await pcr.verifyList(l, cur);
    rec.pins[party] = l;
  }

  async function fetchNew() {
    const seen = new Set(rec.seen);
    let added = 0;
    for (;;) {
      const page = await api(credential, "GET", "/inbox?after=" + rec.cursor + "&limit=50");
      for (const m of page.messages ?? []) {
        try {
          const env = pcr.decodeEnvelope(pcr.unb64(m.envelope));
          if (env.messageId !== m.id || env.conversation !== m.conversation) throw new Error("routing disagrees with the signed header");
          if (rec.pins[env.fromParty] && env.listVersion > rec.pins[env.fromParty].version) await refreshList(env.fromParty);
          const p = JSON.parse(td.decode(await pcr.open(me, rec.pins, seen, env)));
          if (p.kind !== "reply" && p.kind !== "widget") continue;
          rec.history.push({ id: env.messageId, conversation: env.conversation, kind: p.kind, text: p.text, widget: p.widget, replyTo: p.replyToMessageId, mine: false });
          added++;
        } catch (e) {
          rec.refused = (rec.refused ?? 0) + 1;
          console.warn("pacerelle: envelope refused", m.seq, e.message);
        }
      }
      rec.cursor = page.cursor;
      rec.seen = [...seen];
      await saveDevice(rec);
      if ((page.messages ?? []).length > 0) await api(credential, "POST", "/inbox/ack", { seq: page.cursor });
      if (!page.has_more) break;
    }
    if (added > 0) {
      render();
      status(T.js_new_reply);
    }
  }

  function doorbell() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + API + "/doorbell";
    // A browser cannot set Authorization on a WebSocket: the credential
    // travels as a second subprotocol, which the relay reads and never
    // echoes.
    const ws = new WebSocket(url, ["pacerelle.v1", "pacerelle.bearer." + credential]);
    bell = ws;
    ws.onmessage = (ev) => {
      const r = JSON.parse(ev.data);
      if (r.seq > rec.cursor) queue(fetchNew);
    };
    ws.onclose = () => {
      if (bell === ws) setTimeout(doorbell, 2000);
    };
  }

  async function pick() {
    const devices = await allDevices();
    rec = devices.find((d) => d.key === select.value);
    if (!rec) return;
    ({ me, credential } = await unlock(rec));
    conv.value = rec.conversation;
    render();
    await fetchNew();
    const old = bell;
    bell = null;
    old?.close();
    doorbell();
  }

  conv.addEventListener("change", () => queue(async () => {
    rec.conversation = conv.value.trim();
    await saveDevice(rec);
    render();
  }));
  select.addEventListener("change", () => queue(pick));
  $("pc-send").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("pc-text").value;
    if (!text.trim() || !rec) return;
    queue(async () => {
      status(T.js_sending);
      const id = await send({ kind: "request", text }, "req-");
      rec.history.push({ id, conversation: conv.value, kind: "request", text, mine: true });
      await saveDevice(rec);
      $("pc-text").value = "";
      render();
      status(T.js_sent);
    });
  });

  queue(async () => {
    const devices = await allDevices();
    if (devices.length === 0) {
      $("pc-none").hidden = false;
      $("pc-pick").hidden = $("pc-send").hidden = true;
      return;
    }
    for (const d of devices) {
      const o = document.createElement("option");
      o.value = d.key;
      o.textContent = d.agentId + " (" + d.party + ", " + d.deviceId + ")";
      select.append(o);
    }
    await pick();
    document.body.dataset.ready = "true";
  });
}

const page = document.body.dataset.page;
if (page === "pair") pairPage();
else if (page === "chat") chatPage();

// The host side of MCP Apps as hosts run it: one AppBridge of
// @modelcontextprotocol/ext-apps per view, over its PostMessageTransport.
// tests/appbridge_test.go bundles this file with esbuild into the test
// host page and drives window.vpHost over the DevTools protocol. A view is
// loaded as hosts' sandbox proxies load it: the HTML text of resources/read
// in a srcdoc iframe, with the strict CSP a host applies to a resource whose
// _meta.ui.csp allows nothing.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

// The spec's default for a resource that declares no domains.
export const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

const views = new Map();

function withCSP(html) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${DEFAULT_CSP}">`;
  return html.replace(/<head>/i, "<head>" + meta);
}

// mount embeds one view and connects its bridge before the view's script
// runs, as a host must (the view's ui/initialize is its first message).
async function mount(name, html, hostContext) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  frame.title = name;
  frame.style.cssText = "width:800px;height:600px;border:0;display:block";
  document.getElementById("frames").appendChild(frame);
  const rec = { name, received: [], sent: [], sizes: [], errors: [], initialized: false, appInfo: null, appCapabilities: null };
  const bridge = new AppBridge(null, { name: "vp-test-host", version: "1.0.0" }, { openLinks: {}, logging: {} }, { hostContext });
  bridge.oninitialized = () => {
    rec.initialized = true;
    rec.appInfo = bridge.getAppVersion() ?? null;
    rec.appCapabilities = bridge.getAppCapabilities() ?? null;
  };
  // A host fits the frame to the size the view reports.
  bridge.onsizechange = (size) => {
    rec.sizes.push(size);
    if (typeof size.height === "number") frame.style.height = size.height + "px";
  };
  bridge.onerror = (e) => rec.errors.push(String(e));
  const win = frame.contentWindow;
  const transport = new PostMessageTransport(win, win);
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    rec.sent.push(msg.method ?? "response");
    return send(msg, opts);
  };
  // What the view sent, in order, with the params of ui/initialize.
  window.addEventListener("message", (ev) => {
    if (ev.source !== win || !ev.data || ev.data.jsonrpc !== "2.0") return;
    const m = ev.data;
    rec.received.push(m.method ?? "response");
    if (m.method === "ui/initialize") rec.initParams = m.params;
  });
  await bridge.connect(transport);
  views.set(name, { frame, bridge, rec });
  frame.srcdoc = withCSP(html);
  return true;
}

function view(name) {
  const v = views.get(name);
  if (!v) throw new Error("no view " + name);
  return v;
}

// state is what the person sees in the view now, and what the host saw.
function state(name) {
  const { frame, rec } = view(name);
  const d = frame.contentDocument;
  const root = d.querySelector(".vp-root");
  const box = root.getBoundingClientRect();
  return {
    ...rec,
    lang: d.documentElement.lang,
    title: d.title,
    theme: root.getAttribute("data-theme") ?? "",
    bodyTheme: d.body.getAttribute("data-theme") ?? "",
    heading: d.getElementById("vp-title").textContent,
    status: d.getElementById("vp-status").textContent,
    content: d.getElementById("vp-content").innerHTML,
    imgs: d.querySelectorAll("img").length,
    cells: Array.from(d.querySelectorAll("tbody td:first-child"), (td) => td.textContent),
    background: getComputedStyle(root).backgroundColor,
    rootWidth: Math.ceil(box.width),
    rootHeight: Math.ceil(box.height),
    frameHeight: frame.clientHeight,
    scrollHeight: d.documentElement.scrollHeight,
  };
}

async function axe(name) {
  const { frame } = view(name);
  const d = frame.contentDocument;
  if (!frame.contentWindow.axe) {
    // The CSP lets 'self' scripts in: axe-core comes from the host's origin.
    await new Promise((resolve, reject) => {
      const s = d.createElement("script");
      s.src = new URL("/axe.min.js", location.href).href;
      s.onload = resolve;
      s.onerror = () => reject(new Error("axe-core did not load in the view"));
      d.body.appendChild(s);
    });
  }
  const r = await frame.contentWindow.axe.run(d, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
  const out = {
    violations: r.violations.map((v) => v.id + ": " + v.help + " " + v.nodes.map((n) => n.html).join(" ")),
    passes: r.passes.length,
  };
  // axe leaves its script behind: take it out so that the view's DOM is its own.
  d.querySelectorAll('script[src$="/axe.min.js"]').forEach((s) => s.remove());
  return out;
}

// teardown asks the view to tear down and waits for its answer before the
// frame goes, as hosts do; an unanswered request fails after timeoutMs.
async function teardown(name, timeoutMs) {
  const { frame, bridge, rec } = view(name);
  try {
    rec.teardown = await bridge.teardownResource({}, { timeout: timeoutMs });
  } catch (e) {
    rec.teardownError = String(e);
  }
  await bridge.close();
  frame.remove();
  views.delete(name);
  return rec;
}

window.vpHost = {
  DEFAULT_CSP,
  mount,
  state,
  axe,
  teardown,
  ready: (name) => view(name).rec.initialized,
  toolInput: (name, args) => view(name).bridge.sendToolInput({ arguments: args }).then(() => true),
  toolResult: (name, result) => view(name).bridge.sendToolResult(result).then(() => true),
  toolCancelled: (name, reason) => view(name).bridge.sendToolCancelled({ reason }).then(() => true),
  setContext: (name, ctx) => (view(name).bridge.setHostContext(ctx), true),
};

// End-to-end OAuth 2.1 scenarios with the official MCP TypeScript SDK's own
// authorization code: auth() and an OAuthClientProvider with dynamic client
// registration and PKCE, the consent page approved by a scripted form post
// (what a person does in the browser), then tools listed and called with
// the token the SDK obtained.
//
//   VP_E2E_CONFIG='{"url":"http://127.0.0.1:PORT/mcp","master":"...","userToken":"...","tenant":"..."}' \
//     node clients/oauth-flow.mjs <sdk-auth|transport>
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { randomBytes } from "node:crypto";
import { call, config, listAllTools, main } from "./lib.mjs";

const scenario = process.argv[2];
const cfg = config();
const scenarios = { "sdk-auth": sdkAuth, transport };
if (!scenarios[scenario]) {
  console.error(`usage: node clients/oauth-flow.mjs <${Object.keys(scenarios).join("|")}>`);
  process.exit(2);
}
const base = new URL(cfg.url).origin;


/**
 * A provider that keeps everything in memory and plays the person at the
 * consent page: redirectToAuthorization fetches the page, checks it, and
 * posts the form with the sign-in token and "approve".
 */
class Provider {
  constructor(c, name) {
    this.c = c;
    this.name = name;
    this.redirect = "http://127.0.0.1:47913/callback";
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._state = undefined;
    this._discovery = undefined;
    this.code = undefined;
    this.consentPages = 0;
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
  }
  state() {
    this._state = randomBytes(12).toString("hex");
    return this._state;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(t) {
    this._tokens = t;
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
  discoveryState() {
    return this._discovery;
  }
  saveDiscoveryState(s) {
    this._discovery = s;
  }
  async redirectToAuthorization(url) {
    const c = this.c;
    this.consentPages++;
    c.eq("authorization URL: endpoint", url.origin + url.pathname, base + "/oauth/authorize");
    c.eq("authorization URL: PKCE S256", url.searchParams.get("code_challenge_method"), "S256");
    c.ok("authorization URL: resource indicator", (url.searchParams.get("resource") ?? "").startsWith(base), url.searchParams.get("resource"));
    const page = await fetch(url, { headers: { "Accept-Language": "en" } });
    const html = await page.text();
    c.eq("consent page: HTTP 200", page.status, 200);
    c.ok("consent page: names the client", html.includes(escapeHTML(this.name)), html.slice(0, 400));
    c.ok("consent page: labelled token field", /<label for="token">/.test(html) && /<input type="password" id="token" name="token"/.test(html));
    c.ok("consent page: approve and deny buttons", /id="approve"[^>]*value="approve"/.test(html) && /id="deny"[^>]*value="deny"/.test(html));
    c.ok("consent page: works without JavaScript", !/<script/i.test(html));
    c.ok("consent page: profile shown", html.includes(">client-generic<") || html.includes(">" + (cfg.profile ?? "") + "<"));
    // Post the form as the browser would: its hidden fields plus the token.
    const form = new URLSearchParams();
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.set(m[1], unescapeHTML(m[2]));
    form.set("token", cfg.userToken);
    form.set("action", "approve");
    const res = await fetch(base + "/oauth/authorize", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: form,
      redirect: "manual",
    });
    c.eq("approve: 303 redirect", res.status, 303);
    const loc = new URL(res.headers.get("location") ?? "http://invalid/");
    c.eq("approve: back to the registered redirect URI", loc.origin + loc.pathname, this.redirect);
    c.eq("approve: state round-trips", loc.searchParams.get("state"), this._state);
    c.eq("approve: iss is the issuer", loc.searchParams.get("iss"), base);
    c.ok("approve: a code", /^[0-9a-f]{64}$/.test(loc.searchParams.get("code") ?? ""), loc.toString().replace(/code=[^&]+/, "code=…"));
    this.code = loc.searchParams.get("code");
  }
}

function escapeHTML(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;").replace(/'/g, "&#39;");
}
function unescapeHTML(s) {
  return s
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

async function connectWith(provider) {
  const client = new Client({ name: "vp-e2e-oauth", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: provider });
  await client.connect(transport);
  return client;
}

async function rawStatus(token) {
  const res = await fetch(cfg.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await res.text();
  return res.status;
}

async function elevate(clientId, profile) {
  const res = await fetch(base + "/admin/oauth/elevate", {
    method: "POST",
    headers: { Authorization: `Bearer ${cfg.master}`, "Content-Type": "application/json" },
    body: JSON.stringify({ clientId, scopeProfile: profile }),
  });
  return { status: res.status, body: await res.json() };
}

// ---- sdk-auth: auth() step by step, refresh, elevation ----
async function sdkAuth(c) {
  const p = new Provider(c, `SDK auth() client <${cfg.tenant}>`);
  const serverUrl = new URL(cfg.url);

  const first = await auth(p, { serverUrl });
  c.eq("auth(): REDIRECT (registered, consent needed)", first, "REDIRECT");
  c.ok("dynamic registration: client_id", /^vp_client_[0-9a-f]+$/.test(p._client?.client_id ?? ""), p._client);
  c.ok("dynamic registration: a 64-hex secret, returned once", /^[0-9a-f]{64}$/.test(p._client?.client_secret ?? ""));
  c.eq("consent page visited once", p.consentPages, 1);

  const second = await auth(p, { serverUrl, authorizationCode: p.code });
  c.eq("auth(code): AUTHORIZED", second, "AUTHORIZED");
  const t1 = p._tokens;
  c.ok("tokens: 64-hex access token", /^[0-9a-f]{64}$/.test(t1?.access_token ?? ""));
  c.ok("tokens: refresh token", /^[0-9a-f]{64}$/.test(t1?.refresh_token ?? ""));
  c.eq("tokens: Bearer", t1?.token_type, "Bearer");
  c.ok("tokens: expires_in", t1?.expires_in > 0, t1?.expires_in);

  // client-generic: it connects and authenticates, reads and writes nothing.
  let cl = await connectWith(p);
  const tools = await listAllTools(cl);
  c.ok("tools/list with the OAuth token", tools.length >= 12, tools.length);
  const who = await call(cl, "whoami");
  c.success("whoami with a client-generic token", who);
  c.eq("whoami: the approver's tenant", who.data?.tenant, cfg.tenant);
  c.toolError("client-generic may not send", await call(cl, "send_message", { from: "alice", channel: "bob", content: "x" }), "forbidden");
  c.toolError("client-generic may not list", await call(cl, "list_messages"), "forbidden");
  await cl.close();

  // An admin elevates the client; the next refresh carries the profile.
  const el = await elevate(p._client.client_id, cfg.profile);
  c.eq("admin elevate: 200", el.status, 200);
  const third = await auth(p, { serverUrl });
  c.eq("auth() with a refresh token: AUTHORIZED", third, "AUTHORIZED");
  const t2 = p._tokens;
  c.ok("refresh rotated both tokens", t2.access_token !== t1.access_token && t2.refresh_token !== t1.refresh_token);
  c.eq("no consent page for a refresh", p.consentPages, 1);
  c.eq("the rotated-away access token is refused (401)", await rawStatus(t1.access_token), 401);

  cl = await connectWith(p);
  await listAllTools(cl);
  const sent = await call(cl, "send_message", { channel: "bob", content: "hello from an OAuth client" });
  c.success("send_message after elevation", sent);
  c.fact("messageId", sent.data?.messageId);
  const who2 = await call(cl, "whoami");
  c.eq("whoami after elevation: acts as alice (bounded by the approver)", who2.data?.orchestratorId, "alice");
  const listed = await call(cl, "list_messages");
  c.ok("list_messages sees it", (listed.data?.items ?? []).some((m) => m.content === "hello from an OAuth client"), listed.data);
  await cl.close();

  // Reusing the rotated refresh token revokes the grant.
  const reuse = await fetch(base + "/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: "Basic " + btoa(`${p._client.client_id}:${p._client.client_secret}`) },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: t1.refresh_token }),
  });
  c.eq("refresh-token reuse: 400", reuse.status, 400);
  c.eq("refresh-token reuse: invalid_grant", (await reuse.json()).error, "invalid_grant");
  c.eq("after reuse the current access token is refused", await rawStatus(t2.access_token), 401);
  c.fact("clientId", p._client.client_id);
}

// ---- transport: the transport drives auth() on a 401, finishAuth(code) ----
async function transport(c) {
  const p = new Provider(c, "Transport-driven client");
  const client = new Client({ name: "vp-e2e-oauth", version: "1.0.0" });
  let tr = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: p });
  let unauthorized = null;
  try {
    await client.connect(tr);
  } catch (e) {
    unauthorized = e;
  }
  c.ok("first connect: UnauthorizedError after the redirect", unauthorized instanceof UnauthorizedError, String(unauthorized));
  c.ok("the consent page was approved", typeof p.code === "string");
  await tr.finishAuth(p.code);
  c.ok("finishAuth stored tokens", typeof p._tokens?.access_token === "string");
  tr = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: p });
  const cl = new Client({ name: "vp-e2e-oauth", version: "1.0.0" });
  await cl.connect(tr);
  const tools = await listAllTools(cl);
  c.ok("tools/list", tools.some((t) => t.name === "whoami"), tools.length);
  const who = await call(cl, "whoami");
  c.success("whoami", who);
  c.eq("whoami: tenant", who.data?.tenant, cfg.tenant);
  await cl.close();
}

// Last, so that the class above is initialised first.
await main("oauth", scenario, async (c) => {
  await scenarios[scenario](c);
});

// End-to-end OAuth 2.1 scenarios with the official MCP TypeScript SDK's own
// authorization code: auth() and an OAuthClientProvider with dynamic client
// registration and PKCE, the consent page approved by a scripted form post
// (what a person does in the browser), then tools listed and called with
// the token the SDK obtained.
//
//   VP_E2E_CONFIG='{"url":"http://127.0.0.1:PORT/mcp","master":"...","userToken":"...","tenant":"...","cimd":"https://…/client.json"}' \
//     node clients/oauth-flow.mjs <sdk-auth|transport|cimd>
//
// sdk-auth (dynamic registration) and cimd (a client ID metadata document)
// sign in with alice's agent token on the consent page and act as alice at
// once; a write outside her namespaces answers 403 insufficient_scope; the
// token's revocation refuses the client at its next call.
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { randomBytes } from "node:crypto";
import { call, config, listAllTools, main } from "./lib.mjs";

const scenario = process.argv[2];
const cfg = config();
const scenarios = { "sdk-auth": sdkAuth, transport, cimd };
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
  constructor(c, name, { token = cfg.userToken, clientMetadataUrl } = {}) {
    this.c = c;
    this.name = name;
    this.token = token; // what the person pastes on the consent page
    this.metadataUrl = clientMetadataUrl;
    this.redirect = "http://127.0.0.1:47913/callback";
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._state = undefined;
    this._discovery = undefined;
    this.code = undefined;
    this.consentPages = 0;
    this.refusals = []; // consent pages that issued no code: {status, scope, text}
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadataUrl() {
    return this.metadataUrl;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...(this.metadataUrl ? { token_endpoint_auth_method: "none" } : {}),
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
  invalidateCredentials(scope) {
    if (scope === "tokens" || scope === "all") this._tokens = undefined;
    if (scope === "all") this._client = undefined;
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
  /** Plays the person: signs in with this.token, reviews what the client gets, approves. */
  async redirectToAuthorization(url) {
    const c = this.c;
    this.consentPages++;
    this.code = undefined;
    const scope = url.searchParams.get("scope") ?? "";
    c.eq("authorization URL: endpoint", url.origin + url.pathname, base + "/oauth/authorize");
    c.eq("authorization URL: PKCE S256", url.searchParams.get("code_challenge_method"), "S256");
    c.ok("authorization URL: resource indicator", (url.searchParams.get("resource") ?? "").startsWith(base), url.searchParams.get("resource"));
    c.ok("authorization URL: scope mcp:full", scope.split(" ").includes("mcp:full"), scope);
    const page = await fetch(url, { headers: { "Accept-Language": "en" } });
    const html = await page.text();
    c.eq("consent page: HTTP 200", page.status, 200);
    c.ok("consent page: names the client", html.includes(escapeHTML(this.name)), html.slice(0, 400));
    c.ok("consent page: labelled token field", /<label for="token">/.test(html) && /<input type="password" id="token" name="token"/.test(html));
    c.ok("consent page: continue and deny buttons", /id="continue"[^>]*value="review"/.test(html) && /id="deny"[^>]*value="deny"/.test(html));
    c.ok("consent page: works without JavaScript", !/<script/i.test(html));
    // Step one: sign in. Step two: the review shows what the client gets.
    const signIn = hidden(html);
    signIn.set("token", this.token);
    signIn.set("action", "review");
    const review = await post(signIn);
    const rhtml = await review.text();
    if (review.status !== 200) {
      this.refusals.push({ status: review.status, scope, text: rhtml });
      return;
    }
    c.ok("review: the tenant and identity the client gets", rhtml.includes(`id="grant-tenant">${cfg.tenant}<`) && /id="grant-acts-as">[^<]+</.test(rhtml));
    c.ok("review: the token is not echoed", !rhtml.includes(this.token));
    const approve = hidden(rhtml);
    for (const m of rhtml.matchAll(/<input type="checkbox" id="[^"]+" name="(read|write)" value="([^"]*)" checked>/g)) approve.append(m[1], unescapeHTML(m[2]));
    approve.set("action", "approve");
    const res = await post(approve);
    if (res.status !== 303) {
      this.refusals.push({ status: res.status, scope, text: await res.text() });
      return;
    }
    const loc = new URL(res.headers.get("location") ?? "http://invalid/");
    c.eq("approve: back to the registered redirect URI", loc.origin + loc.pathname, this.redirect);
    c.eq("approve: state round-trips", loc.searchParams.get("state"), this._state);
    c.eq("approve: iss is the issuer", loc.searchParams.get("iss"), base);
    c.ok("approve: a code", /^[0-9a-f]{64}$/.test(loc.searchParams.get("code") ?? ""), loc.toString().replace(/code=[^&]+/, "code=…"));
    this.code = loc.searchParams.get("code");
  }
}

/** The hidden fields of a page, as the browser posts them. */
function hidden(html) {
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.set(m[1], unescapeHTML(m[2]));
  return form;
}

async function post(form) {
  return fetch(base + "/oauth/authorize", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form,
    redirect: "manual",
  });
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

async function admin(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${cfg.master}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

// alice's everyday agent token: she reads global, project and her own
// namespace, writes project and her own.
const aliceNamespaces = { read: ["global", "project", "orchestrator/alice"], write: ["project", "orchestrator/alice"] };
async function mintAlice(c) {
  const r = await admin("POST", "/admin/tokens", { tenant: cfg.tenant, actsAs: ["alice"], ...aliceNamespaces, label: "alice e2e" });
  c.eq("admin mints alice's agent token", r.status, 200);
  return { secret: r.body.token, id: r.body.record?.id };
}

async function rawCall(token, name, args) {
  const res = await fetch(cfg.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  return { status: res.status, www: res.headers.get("www-authenticate") ?? "", body: await res.text() };
}

/**
 * What "How it is checked" asks, with the client p already signed in with
 * alice's token: it acts as alice at once, in her namespaces; a write
 * outside them answers 403 insufficient_scope naming the scope, and a host
 * that asks again for that scope is refused on the consent page by alice's
 * token — and granted with a token that has it.
 */
async function actsAsAlice(c, p, label) {
  const cl = await connectWith(p);
  const who = await call(cl, "whoami");
  c.success(`${label}: whoami`, who);
  c.eq(`${label}: acts as alice`, who.data?.orchestratorId, "alice");
  c.eq(`${label}: alice's tenant`, who.data?.tenant, cfg.tenant);
  c.eq(`${label}: alice's write namespaces, no more`, JSON.stringify(who.data?.namespaceWritePrefixes), JSON.stringify(aliceNamespaces.write));
  const sent = await call(cl, "send_message", { channel: "bob", content: `hello from ${label}` });
  c.success(`${label}: send_message as alice, no admin step`, sent);
  const mem = await call(cl, "store_memory", { namespace: "orchestrator/alice", type: "note", content: `stored by ${label}` });
  c.success(`${label}: store_memory in alice's namespace`, mem);
  const outside = { namespace: "orchestrator/bob", type: "note", content: "not hers" };
  const raw = await rawCall(p._tokens.access_token, "store_memory", outside);
  c.eq(`${label}: a write outside her namespaces: HTTP 403`, raw.status, 403);
  c.ok(`${label}: 403 insufficient_scope naming the scope`, raw.www.startsWith('Bearer error="insufficient_scope", scope="mcp:full ns:write:orchestrator/bob"'), raw.www);
  // The SDK's own step-up: it refreshes (a refresh cannot add a scope) and
  // gets the same 403, which it reports.
  const sdk = await call(cl, "store_memory", outside);
  c.ok(`${label}: the SDK reports the 403 after trying to upscope`, /403/.test(sdk.threw ?? ""), sdk);
  await cl.close();
  // A host that asks the person again for the challenged scope.
  const challenged = /scope="([^"]+)"/.exec(raw.www)[1];
  const saved = p._tokens;
  p._tokens = undefined;
  const before = p.refusals.length;
  c.eq(`${label}: asking again: REDIRECT`, await auth(p, { serverUrl: new URL(cfg.url), scope: challenged }), "REDIRECT");
  const refused = p.refusals[before];
  c.ok(`${label}: alice's token cannot approve ns:write:orchestrator/bob (403 naming it)`, refused?.status === 403 && refused.text.includes("ns:write:orchestrator/bob") && refused.scope === challenged, refused?.status);
  const aliceToken = p.token;
  p.token = cfg.userToken; // acts as alice, reads and writes every namespace
  c.eq(`${label}: asking again, approved by a token that has it`, await auth(p, { serverUrl: new URL(cfg.url), scope: challenged }), "REDIRECT");
  c.eq(`${label}: AUTHORIZED`, await auth(p, { serverUrl: new URL(cfg.url), authorizationCode: p.code }), "AUTHORIZED");
  const cl2 = await connectWith(p);
  c.success(`${label}: the write it asked for now succeeds`, await call(cl2, "store_memory", outside));
  await cl2.close();
  p.token = aliceToken;
  p._tokens = saved;
  return sent.data?.messageId;
}

/** Revoking alice's token refuses the client at its next call, and its refresh. */
async function refusedOnceRevoked(c, p, tokenId, label) {
  const d = await admin("DELETE", "/admin/tokens/" + tokenId);
  c.eq(`${label}: admin revokes alice's token`, d.status, 200);
  const raw = await rawCall(p._tokens.access_token, "whoami", {});
  c.eq(`${label}: the client's next call: 401`, raw.status, 401);
  c.ok(`${label}: naming the revoked approver`, raw.www.includes(`on the approval of token ${tokenId}`), raw.www);
  const cl = new Client({ name: "vp-e2e-oauth", version: "1.0.0" });
  const tr = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: p });
  let err = null;
  const before = p.refusals.length;
  try {
    await cl.connect(tr);
  } catch (e) {
    err = e;
  }
  c.ok(`${label}: the SDK cannot refresh and asks the person again`, err instanceof UnauthorizedError && p._tokens === undefined, String(err));
  c.eq(`${label}: where the revoked token no longer signs in (401)`, p.refusals[before]?.status, 401);
}

// ---- sdk-auth: dynamic registration, auth() step by step, refresh, elevation, revocation ----
async function sdkAuth(c) {
  const alice = await mintAlice(c);
  const p = new Provider(c, `SDK auth() client <${cfg.tenant}>`, { token: alice.secret });
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

  let cl = await connectWith(p);
  const tools = await listAllTools(cl);
  c.ok("tools/list with the OAuth token", tools.length >= 12, tools.length);
  await cl.close();
  c.fact("messageId", await actsAsAlice(c, p, "DCR client"));

  // An admin's profile is a ceiling under the person's rights: elevated to
  // a writer of every namespace, the client still acts as alice, in hers.
  const el = await elevate(p._client.client_id, cfg.profile);
  c.eq("admin elevate: 200", el.status, 200);
  const third = await auth(p, { serverUrl });
  c.eq("auth() with a refresh token: AUTHORIZED", third, "AUTHORIZED");
  const t2 = p._tokens;
  c.ok("refresh rotated both tokens", t2.access_token !== t1.access_token && t2.refresh_token !== t1.refresh_token);
  c.eq("the rotated-away access token is refused (401)", await rawStatus(t1.access_token), 401);
  cl = await connectWith(p);
  const who2 = await call(cl, "whoami");
  c.eq("whoami after elevation: acts as alice (bounded by the approver)", who2.data?.orchestratorId, "alice");
  c.eq("whoami after elevation: alice's namespaces", JSON.stringify(who2.data?.namespaceWritePrefixes), JSON.stringify(aliceNamespaces.write));
  const listed = await call(cl, "list_messages");
  c.ok("list_messages sees alice's message", (listed.data?.items ?? []).some((m) => m.content === "hello from DCR client"), listed.data);
  await cl.close();

  // Reusing a rotated refresh token revokes the grant.
  const reuse = await fetch(base + "/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: "Basic " + btoa(`${p._client.client_id}:${p._client.client_secret}`) },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: t1.refresh_token }),
  });
  c.eq("refresh-token reuse: 400", reuse.status, 400);
  c.eq("refresh-token reuse: invalid_grant", (await reuse.json()).error, "invalid_grant");
  c.eq("after reuse the current access token is refused", await rawStatus(t2.access_token), 401);

  // Signed in again, then alice's token is revoked.
  p._tokens = undefined;
  c.eq("signing in again: REDIRECT", await auth(p, { serverUrl }), "REDIRECT");
  c.eq("signing in again: AUTHORIZED", await auth(p, { serverUrl, authorizationCode: p.code }), "AUTHORIZED");
  await refusedOnceRevoked(c, p, alice.id, "DCR client");
  c.fact("clientId", p._client.client_id);
}

// ---- cimd: a client ID metadata document, the transport driving auth() ----
async function cimd(c) {
  const alice = await mintAlice(c);
  const p = new Provider(c, "CIMD client", { token: alice.secret, clientMetadataUrl: cfg.cimd });
  let tr = new StreamableHTTPClientTransport(new URL(cfg.url), { authProvider: p });
  let unauthorized = null;
  try {
    await new Client({ name: "vp-e2e-oauth", version: "1.0.0" }).connect(tr);
  } catch (e) {
    unauthorized = e;
  }
  c.ok("first connect: UnauthorizedError after the redirect", unauthorized instanceof UnauthorizedError, String(unauthorized));
  c.eq("the client id is the metadata document's URL (no registration)", p._client?.client_id, cfg.cimd);
  c.ok("the consent page was approved", typeof p.code === "string");
  await tr.finishAuth(p.code);
  c.ok("finishAuth stored tokens", typeof p._tokens?.access_token === "string");
  c.fact("messageId", await actsAsAlice(c, p, "CIMD client"));
  await refusedOnceRevoked(c, p, alice.id, "CIMD client");
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

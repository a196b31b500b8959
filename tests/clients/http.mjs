// End-to-end scenarios over Streamable HTTP with the official MCP TypeScript
// SDK (Client + StreamableHTTPClientTransport, bearer token in
// requestInit.headers).
//
//   VP_E2E_CONFIG='{"url":"http://127.0.0.1:PORT/mcp","master":"...","tenant":"msg","tokens":{"alice":"..."}}' \
//     node clients/http.mjs <tools|messaging|paging|errors|isolation|unauthorized>
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { EXPECTED_TOOLS, call, missingTools, config, connectHTTP, listAllTools, main } from "./lib.mjs";

const scenario = process.argv[2];
const cfg = config();

const scenarios = { tools, messaging, paging, errors, isolation, unauthorized };
if (!scenarios[scenario]) {
  console.error(`usage: node clients/http.mjs <${Object.keys(scenarios).join("|")}>`);
  process.exit(2);
}

await main("http", scenario, async (c) => {
  const clients = [];
  const connect = async (token, opts) => {
    const cl = await connectHTTP(cfg.url, token, opts);
    clients.push(cl);
    // Cache tool definitions so that callTool validates structuredContent
    // against each tool's outputSchema, as real clients do.
    await listAllTools(cl);
    return cl;
  };
  try {
    await scenarios[scenario](c, connect);
  } finally {
    await Promise.allSettled(clients.map((cl) => cl.close()));
  }
});

// ---- tools: initialize, tools/list, whoami ----
async function tools(c, connect) {
  const cl = await connect(cfg.master);
  const info = cl.getServerVersion();
  c.eq("initialize: serverInfo.name", info?.name, "vantagepeers");
  c.ok("initialize: serverInfo.version", typeof info?.version === "string" && info.version.length > 0, info);
  c.ok("initialize: tools capability", cl.getServerCapabilities()?.tools !== undefined, cl.getServerCapabilities());
  c.ok("initialize: instructions", (cl.getInstructions() ?? "").length > 40, cl.getInstructions());

  const list = await listAllTools(cl);
  const names = list.map((t) => t.name).sort();
  c.fact("toolCount", list.length);
  c.fact("toolNames", names);
  c.eq("tools/list: all 12 profile and messaging tools are there", missingTools(names), []);
  c.eq("tools/list: names are unique", new Set(names).size, names.length);
  for (const t of list) {
    // Every tool, including those of other capabilities.
    c.ok(`tools/list: ${t.name} has a description`, typeof t.description === "string" && t.description.length >= 30, t.description);
    c.ok(`tools/list: ${t.name} has annotations`, t.annotations && typeof t.annotations === "object" && Object.keys(t.annotations).length > 0, t.annotations);
    c.eq(`tools/list: ${t.name} inputSchema is an object schema`, t.inputSchema?.type, "object");
    if (EXPECTED_TOOLS.includes(t.name)) {
      c.ok(`tools/list: ${t.name} description has an example`, /Example: \{/.test(t.description ?? ""), t.description);
      c.eq(`tools/list: ${t.name} openWorldHint false`, t.annotations?.openWorldHint, false);
    }
  }
  const byName = Object.fromEntries(list.map((t) => [t.name, t]));
  for (const n of ["whoami", "get_profile", "list_peers", "check_messages", "get_message", "list_messages", "list_broadcast_status"]) {
    c.eq(`annotations: ${n} is read-only`, byName[n]?.annotations?.readOnlyHint, true);
  }
  for (const n of ["send_message", "update_profile", "set_summary", "mark_as_read", "delete_message"]) {
    c.ok(`annotations: ${n} is not read-only`, byName[n]?.annotations?.readOnlyHint !== true, byName[n]?.annotations);
  }
  c.eq("annotations: delete_message is destructive", byName.delete_message?.annotations?.destructiveHint, true);
  c.eq("annotations: send_message is not destructive", byName.send_message?.annotations?.destructiveHint, false);
  c.eq("inputSchema: send_message requires channel and content", [...(byName.send_message?.inputSchema?.required ?? [])].sort(), ["channel", "content"]);

  const who = await call(cl, "whoami");
  c.success("whoami (master)", who);
  c.eq("whoami (master): tenant", who.data?.tenant, "default");
  c.eq("whoami (master): admin", who.data?.admin, true);
  c.eq("whoami (master): no default orchestrator", who.data?.orchestratorId, undefined);
}

// ---- messaging: profiles, direct message round trip, broadcast ----
async function messaging(c, connect) {
  const alice = await connect(cfg.tokens.alice);
  const bob = await connect(cfg.tokens.bob);
  const admin = await connect(cfg.master, { tenant: cfg.tenant });

  const who = await call(alice, "whoami");
  c.success("alice whoami", who);
  c.eq("alice whoami: tenant", who.data?.tenant, cfg.tenant);
  c.eq("alice whoami: default orchestrator", who.data?.orchestratorId, "alice");

  // Presence and profile.
  const sum = await call(alice, "set_summary", { instanceId: "alice-main", summary: "Migrating HeroSection — ETA 30 min" });
  c.success("alice set_summary", sum);
  c.eq("set_summary: ok", sum.data?.ok, true);
  c.eq("set_summary: profile orchestrator defaults to alice", sum.data?.profile?.orchestratorId, "alice");
  c.eq("set_summary: instance", sum.data?.profile?.instanceId, "alice-main");
  const upd = await call(alice, "update_profile", { name: "Alice", static: { role: "frontend", capabilities: ["react", "css"] } });
  c.success("alice update_profile", upd);
  c.eq("update_profile: name", upd.data?.name, "Alice");
  c.eq("update_profile: role", upd.data?.static?.role, "frontend");
  const upd2 = await call(alice, "update_profile", { dynamic: { currentTask: "hero" } });
  c.success("alice partial update_profile", upd2);
  c.eq("partial update keeps name", upd2.data?.name, "Alice");
  c.eq("partial update keeps static", upd2.data?.static?.capabilities, ["react", "css"]);
  const prof = await call(bob, "get_profile", { orchestratorId: "alice" });
  c.success("bob get_profile alice", prof);
  c.eq("get_profile: name", prof.data?.name, "Alice");
  c.eq("get_profile: instances", (prof.data?.instances ?? []).map((i) => [i.instanceId, i.summary]), [["alice-main", "Migrating HeroSection — ETA 30 min"]]);
  c.success("bob update_profile", await call(bob, "update_profile", { name: "Bob" }));
  c.success("carol profile (master, explicit orchestratorId)", await call(admin, "update_profile", { orchestratorId: "carol", name: "Carol" }));

  // Direct message bob -> alice.
  const content = "API schema merged, you can rebase ✓";
  const sent = await call(bob, "send_message", { channel: "alice", content });
  c.success("bob send_message to alice", sent);
  const messageId = sent.data?.messageId;
  c.ok("send_message: messageId", /^msg_[0-9a-z]{26}$/.test(messageId ?? ""), sent.data);
  c.eq("send_message: one recipient, alice", (sent.data?.recipients ?? []).map((r) => r.recipient), ["alice"]);

  const inbox = await call(alice, "check_messages");
  c.success("alice check_messages", inbox);
  const msgs = inbox.data?.messages ?? [];
  c.eq("check_messages: exactly one message", msgs.length, 1);
  c.eq("check_messages: count", inbox.data?.count, 1);
  c.eq("check_messages: hasMore false", inbox.data?.hasMore, false);
  const m = msgs[0] ?? {};
  c.eq("check_messages: messageId", m.messageId, messageId);
  c.eq("check_messages: from bob", m.from, "bob");
  c.eq("check_messages: content intact", m.content, content);
  c.ok("check_messages: receiptId", /^rcp_[0-9a-z]{26}$/.test(m.receiptId ?? ""), m);
  c.eq("check_messages: receiptId is the one send returned", m.receiptId, sent.data?.recipients?.[0]?.receiptId);
  c.eq("check_messages: unread", m.readAt, null);

  const bobInbox = await call(bob, "check_messages");
  c.eq("bob's inbox is empty (sender gets no copy)", bobInbox.data?.messages, []);

  const mark = await call(alice, "mark_as_read", { receiptIds: [m.receiptId] });
  c.success("alice mark_as_read", mark);
  c.eq("mark_as_read: marked 1", mark.data?.marked, 1);
  const again = await call(alice, "mark_as_read", { receiptIds: [m.receiptId] });
  c.eq("mark_as_read again: marked 0 (idempotent)", again.data?.marked, 0);
  const bobMarks = await call(bob, "mark_as_read", { receiptIds: [m.receiptId] });
  c.toolError("bob may not mark alice's receipt", bobMarks, "receiptIds");
  const empty = await call(alice, "check_messages");
  c.success("second check_messages", empty);
  c.eq("second check_messages: empty", empty.data?.messages, []);
  c.eq("second check_messages: count 0", empty.data?.count, 0);

  const got = await call(alice, "get_message", { messageId });
  c.success("get_message", got);
  c.eq("get_message: content", got.data?.content, content);
  c.eq("get_message: channel", got.data?.channel, "alice");

  // Broadcast alice -> everyone with a profile but alice.
  const bc = await call(alice, "send_message", { channel: "broadcast", content: "standup in 5" });
  c.success("alice broadcast", bc);
  const bcID = bc.data?.messageId;
  c.eq("broadcast: recipients are bob and carol", (bc.data?.recipients ?? []).map((r) => r.recipient).sort(), ["bob", "carol"]);
  const bobBC = await call(bob, "check_messages");
  c.eq("bob received the broadcast", (bobBC.data?.messages ?? []).map((x) => [x.messageId, x.from, x.channel]), [[bcID, "alice", "broadcast"]]);
  const carolBC = await call(admin, "check_messages", { recipient: "carol" });
  c.eq("carol received the broadcast", (carolBC.data?.messages ?? []).map((x) => [x.messageId, x.content]), [[bcID, "standup in 5"]]);
  const aliceBC = await call(alice, "check_messages");
  c.eq("the broadcaster gets no copy", aliceBC.data?.messages, []);

  const st1 = await call(alice, "list_broadcast_status", { messageId: bcID });
  c.success("list_broadcast_status", st1);
  c.eq("broadcast status: messageId", st1.data?.messageId, bcID);
  c.eq("broadcast status: from", st1.data?.from, "alice");
  c.eq("broadcast status: receipts", (st1.data?.receipts ?? []).map((r) => [r.recipient, r.read]).sort(), [["bob", false], ["carol", false]]);
  c.eq("broadcast status: unread 2", [st1.data?.readCount, st1.data?.unreadCount], [0, 2]);

  const bobRcp = bobBC.data?.messages?.[0]?.receiptId;
  c.eq("bob marks the broadcast read", (await call(bob, "mark_as_read", { receiptIds: [bobRcp] })).data?.marked, 1);
  const st2 = await call(alice, "list_broadcast_status", { messageId: bcID });
  c.eq("broadcast status after bob read: receipts", (st2.data?.receipts ?? []).map((r) => [r.recipient, r.read]).sort(), [["bob", true], ["carol", false]]);
  c.eq("broadcast status after bob read: counts", [st2.data?.readCount, st2.data?.unreadCount], [1, 1]);
  const bobR = (st2.data?.receipts ?? []).find((r) => r.recipient === "bob");
  c.ok("broadcast status: bob's readAt is set", typeof bobR?.readAt === "number" && bobR.readAt > 0, bobR);

  // Deletion: only the sender.
  const del1 = await call(bob, "delete_message", { messageId: bcID });
  c.toolError("bob may not delete alice's broadcast", del1, "callerOrchestrator");
  const del2 = await call(alice, "delete_message", { messageId: bcID });
  c.success("alice deletes her broadcast", del2);
  c.eq("delete_message: receipts deleted", [del2.data?.deleted, del2.data?.receiptsDeleted], [true, 2]);
  c.toolError("get_message after delete: not found", await call(alice, "get_message", { messageId: bcID }), "not_found", "messageId");
  const carolAfter = await call(admin, "check_messages", { recipient: "carol" });
  c.eq("carol's unread receipt went with the message", carolAfter.data?.messages, []);

  c.fact("messageId", messageId);
  c.fact("broadcastRecipients", (bc.data?.recipients ?? []).map((r) => r.recipient).sort());
}

// ---- paging: list_messages and list_peers pagination ----
async function paging(c, connect) {
  const alice = await connect(cfg.tokens.alice);
  const admin = await connect(cfg.master, { tenant: cfg.tenant });
  const N = cfg.messages ?? 45;
  const P = cfg.peers ?? 33;

  const ids = [];
  for (let i = 0; i < N; i++) {
    const r = await call(alice, "send_message", { channel: "bob", content: `page-msg-${String(i).padStart(2, "0")}` });
    if (!c.success(`seed message ${i}`, r)) return;
    ids.push(r.data.messageId);
  }

  const pages = [];
  let cursor;
  for (let guard = 0; guard < 10; guard++) {
    const r = await call(alice, "list_messages", cursor ? { limit: 20, cursor } : { limit: 20 });
    if (!c.success(`list_messages page ${pages.length + 1}`, r)) return;
    pages.push(r);
    cursor = r.data?.nextCursor;
    if (!cursor) break;
  }
  const sizes = pages.map((p) => p.data.items.length);
  const items = pages.flatMap((p) => p.data.items);
  const last = pages[pages.length - 1];
  c.fact("messagePageSizes", sizes);
  c.fact("messageItems", items.length);
  c.eq("list_messages: 3 pages of 20, 20, 5", sizes, [20, 20, N - 40]);
  c.eq("list_messages: all items back", items.length, N);
  c.eq("list_messages: no duplicates", new Set(items.map((m) => m._id)).size, N);
  c.eq("list_messages: exactly the seeded ids, newest first", items.map((m) => m._id), [...ids].reverse());
  const lastHasKey = Object.prototype.hasOwnProperty.call(last.data, "nextCursor");
  c.fact("lastPageHasNextCursorKey", lastHasKey);
  c.eq("list_messages: last page has NO nextCursor key (structuredContent)", lastHasKey, false);
  c.ok("list_messages: last page has NO nextCursor key (text content)", !last.text.includes("nextCursor"), last.text);
  c.ok("list_messages: earlier pages have a string nextCursor", pages.slice(0, -1).every((p) => typeof p.data.nextCursor === "string" && p.data.nextCursor.length > 0));

  const lite = await call(alice, "list_messages", { limit: 3, fields: "lite" });
  c.success("list_messages fields=lite", lite);
  c.eq("lite: keys", Object.keys(lite.data?.items?.[0] ?? {}).sort(), ["_creationTime", "_id", "channel", "createdAt", "from"]);
  const big = await call(alice, "list_messages", { limit: 5000 });
  c.eq("limit above 200 is clamped, not refused: all 45 fit", big.data?.items?.length, N);
  c.eq("one page holding everything has no nextCursor", Object.prototype.hasOwnProperty.call(big.data ?? {}, "nextCursor"), false);
  const byFrom = await call(alice, "list_messages", { from: "alice", limit: 50 });
  c.eq("list_messages from=alice: all", byFrom.data?.items?.length, N);
  const byOther = await call(alice, "list_messages", { from: "zed" });
  c.eq("list_messages from=zed: none, no cursor", byOther.data, { items: [] });

  // list_peers: seed P profiles in this tenant (alice sent messages but has no profile).
  const peers0 = await call(admin, "list_peers");
  c.eq("list_peers before seeding: empty", peers0.data, { items: [] });
  for (let i = 0; i < P; i++) {
    const r = await call(admin, "update_profile", { orchestratorId: `peer-${String(i).padStart(2, "0")}`, name: `Peer ${i}` });
    if (!c.success(`seed profile ${i}`, r)) return;
  }
  const seen = [];
  const peerSizes = [];
  cursor = undefined;
  let lastPeers;
  for (let guard = 0; guard < 20; guard++) {
    const r = await call(alice, "list_peers", cursor ? { limit: 10, cursor } : { limit: 10 });
    if (!c.success(`list_peers page ${peerSizes.length + 1}`, r)) return;
    peerSizes.push(r.data.items.length);
    seen.push(...r.data.items.map((p) => p.orchestratorId));
    lastPeers = r;
    cursor = r.data?.nextCursor;
    if (!cursor) break;
  }
  c.fact("peerPageSizes", peerSizes);
  c.fact("peers", seen.length);
  c.eq("list_peers: N profiles back", seen.length, P);
  c.eq("list_peers: each once", new Set(seen).size, P);
  c.eq("list_peers: most recently updated first", seen, Array.from({ length: P }, (_, i) => `peer-${String(P - 1 - i).padStart(2, "0")}`));
  c.eq("list_peers: last page has NO nextCursor key", Object.prototype.hasOwnProperty.call(lastPeers.data, "nextCursor"), false);
  const liteP = await call(alice, "list_peers", { limit: 1, fields: "lite" });
  c.eq("list_peers lite: keys", Object.keys(liteP.data?.items?.[0] ?? {}).sort(), ["_creationTime", "_id", "orchestratorId", "updatedAt"]);

  // A cursor is bound to its query: list_messages' cursor is refused by list_peers.
  const firstCursor = pages[0].data.nextCursor;
  c.toolError("list_messages cursor refused by list_peers", await call(alice, "list_peers", { cursor: firstCursor }), "cursor");
  c.toolError("cursor refused with other filters", await call(alice, "list_messages", { cursor: firstCursor, from: "alice" }), "cursor");
}

// ---- errors: tool errors name the field ----
async function errors(c, connect) {
  const alice = await connect(cfg.tokens.alice);
  const who = await call(alice, "whoami");
  c.eq("alice acts as alice only", who.data?.actsAs, ["alice"]);

  c.toolError("missing required field content", await call(alice, "send_message", { channel: "bob" }), "content");
  c.toolError("missing required field channel", await call(alice, "send_message", { content: "hi" }), "channel");
  c.toolError("missing required field messageId", await call(alice, "get_message", {}), "messageId");
  c.toolError("empty required field content", await call(alice, "send_message", { channel: "bob", content: "   " }), "content");
  c.toolError("wrong type: channel is a number", await call(alice, "send_message", { channel: 5, content: "hi" }), "channel");
  c.toolError("wrong type: limit is a string", await call(alice, "list_messages", { limit: "ten" }), "limit");
  c.toolError("wrong type: receiptIds is a string", await call(alice, "mark_as_read", { receiptIds: "rcp_x" }), "receiptIds");
  c.toolError("unknown enum value fields=medium (list_messages)", await call(alice, "list_messages", { fields: "medium" }), "fields", "medium");
  c.toolError("unknown enum value fields=medium (list_peers)", await call(alice, "list_peers", { fields: "medium" }), "fields", "medium");

  const limit = 64 * 1024;
  const tooBig = await call(alice, "send_message", { channel: "bob", content: "x".repeat(limit + 1) });
  c.toolError("content over 64 KiB: names the field and the limit 65536", tooBig, "content", "65536");
  c.fact("tooLargeText", tooBig.text);
  const justFits = await call(alice, "send_message", { channel: "bob", content: "x".repeat(limit) });
  c.success("content of exactly 64 KiB is accepted", justFits);
  const multi = await call(alice, "send_message", { channel: "bob", content: "é".repeat(limit / 2 + 1) });
  c.toolError("the limit counts bytes, not characters", multi, "content", "65536");

  const asBob = await call(alice, "send_message", { from: "bob", channel: "carol", content: "spoof" });
  c.toolError("alice's token sending as bob: forbidden, names from", asBob, "from", "bob");
  c.fact("forbiddenFromText", asBob.text);
  c.toolError("alice's token reading bob's inbox: names recipient", await call(alice, "check_messages", { recipient: "bob" }), "recipient");
  c.toolError("alice's token writing bob's profile: names orchestratorId", await call(alice, "update_profile", { orchestratorId: "bob", name: "B" }), "orchestratorId");
  c.toolError("system is reserved to admins", await call(alice, "send_message", { from: "system", channel: "bob", content: "x" }), "from");

  c.toolError("unknown message id: not_found names messageId", await call(alice, "get_message", { messageId: "msg_01jd0000000000000000000000" }), "not_found", "messageId");
  c.toolError("unknown receipt id: names receiptIds", await call(alice, "mark_as_read", { receiptIds: ["rcp_01jd0000000000000000000000"] }), "receiptIds");
  c.toolError("empty receiptIds", await call(alice, "mark_as_read", { receiptIds: [] }), "receiptIds");
  c.toolError("channel with no recipient", await call(alice, "send_message", { channel: " , ", content: "x" }), "channel");
  c.toolError("broadcast with no other profile", await call(alice, "send_message", { channel: "broadcast", content: "x" }), "channel", "broadcast");

  // Cursors: a tampered one is refused, naming cursor.
  for (let i = 0; i < 3; i++) await call(alice, "send_message", { channel: "bob", content: `cursor-${i}` });
  const p1 = await call(alice, "list_messages", { limit: 1 });
  const cur = p1.data?.nextCursor;
  c.ok("a page with more has a nextCursor", typeof cur === "string" && cur.length > 10, p1.data);
  if (typeof cur === "string") {
    const i = Math.floor(cur.length / 2);
    const tampered = cur.slice(0, i) + (cur[i] === "A" ? "B" : "A") + cur.slice(i + 1);
    const r = await call(alice, "list_messages", { limit: 1, cursor: tampered });
    c.toolError("tampered cursor: isError naming cursor", r, "cursor");
    c.fact("tamperedCursorText", r.text);
    c.toolError("garbage cursor: isError naming cursor", await call(alice, "list_messages", { cursor: "not-a-cursor!" }), "cursor");
    const ok = await call(alice, "list_messages", { limit: 1, cursor: cur });
    c.success("the untampered cursor still works", ok);
    c.eq("the untampered cursor gives the next item", ok.data?.items?.length, 1);
  }
  // The server is still fine after all the errors.
  c.success("whoami after the errors", await call(alice, "whoami"));
}

// ---- isolation: tenant B sees nothing of tenant A ----
async function isolation(c, connect) {
  const a = await connect(cfg.tokens.a);
  const b = await connect(cfg.tokens.b);

  const whoB = await call(b, "whoami");
  c.eq("tenant B token: tenant", whoB.data?.tenant, cfg.tenantB);
  c.eq("tenant B token: acts as anyone", whoB.data?.actsAs, ["*"]);

  c.success("A set_summary", await call(a, "set_summary", { instanceId: "alice-main", summary: "secret project" }));
  c.success("A update_profile", await call(a, "update_profile", { name: "Alice A" }));
  const ids = [];
  for (let i = 0; i < 3; i++) {
    const s = await call(a, "send_message", { channel: "bob", content: `tenant A secret ${i}` });
    c.success(`A send ${i}`, s);
    ids.push(s.data?.messageId);
  }
  const aPage = await call(a, "list_messages", { limit: 1 });
  const aCursor = aPage.data?.nextCursor;
  c.ok("A gets a list_messages cursor", typeof aCursor === "string", aPage.data);
  const aPeers = await call(a, "list_peers", { limit: 1 });
  const aPeersCursor = aPeers.data?.nextCursor;
  c.ok("A gets a list_peers cursor", typeof aPeersCursor === "string", aPeers.data);
  // Positive control: A sees its own data.
  c.eq("A sees its 3 messages", (await call(a, "list_messages", { limit: 50 })).data?.items?.length, 3);
  c.eq("A sees its 2 peer rows", (await call(a, "list_peers")).data?.items?.length, 2);

  // B sees nothing of it.
  c.eq("B list_peers: empty", (await call(b, "list_peers")).data, { items: [] });
  c.eq("B list_messages: empty", (await call(b, "list_messages")).data, { items: [] });
  c.eq("B list_messages from alice: empty", (await call(b, "list_messages", { from: "alice" })).data, { items: [] });
  c.eq("B list_messages channel bob: empty", (await call(b, "list_messages", { channel: "bob" })).data, { items: [] });
  for (const who of ["bob", "alice"]) {
    const inbox = await call(b, "check_messages", { recipient: who });
    c.success(`B check_messages ${who}`, inbox);
    c.eq(`B check_messages ${who}: empty`, inbox.data?.messages, []);
  }
  const gm = await call(b, "get_message", { messageId: ids[0] });
  c.toolError("B get_message of A's id: not found", gm, "not_found", "messageId");
  c.fact("crossTenantGetMessageText", gm.text);
  c.toolError("B list_broadcast_status of A's id: not found", await call(b, "list_broadcast_status", { messageId: ids[0] }), "not_found");
  c.toolError("B delete_message of A's id: not found", await call(b, "delete_message", { messageId: ids[0], callerOrchestrator: "alice" }), "not_found");
  c.toolError("B get_profile alice: not found", await call(b, "get_profile", { orchestratorId: "alice" }), "not_found", "orchestratorId");
  const rc = await call(b, "list_messages", { limit: 1, cursor: aCursor });
  c.toolError("A's list_messages cursor refused in B: names cursor", rc, "cursor");
  c.fact("crossTenantCursorText", rc.text);
  c.toolError("A's list_peers cursor refused in B: names cursor", await call(b, "list_peers", { limit: 1, cursor: aPeersCursor }), "cursor");

  // Receipts of A cannot be marked from B.
  const aliceToBob = await call(a, "send_message", { channel: "bob", content: "for bob" });
  const rcp = aliceToBob.data?.recipients?.[0]?.receiptId;
  c.toolError("B mark_as_read of A's receipt: refused", await call(b, "mark_as_read", { receiptIds: [rcp] }), "receiptIds");

  // B writes in its own tenant; A does not see it.
  c.success("B update_profile alice (its own alice)", await call(b, "update_profile", { orchestratorId: "alice", name: "Alice B" }));
  const aProf = await call(a, "get_profile", { orchestratorId: "alice" });
  c.eq("A's alice is untouched by B's alice", aProf.data?.name, "Alice A");
  c.eq("A still sees 2 peer rows", (await call(a, "list_peers")).data?.items?.length, 2);
}

// ---- unauthorized: a client with a wrong or no token cannot connect ----
async function unauthorized(c, connect) {
  for (const [label, token] of [["unknown token", "0".repeat(64)], ["malformed token", "not-a-token"]]) {
    let err = null;
    try {
      await connect(token);
    } catch (e) {
      err = String(e?.message ?? e);
    }
    c.ok(`${label}: connect fails`, err !== null, err);
    c.ok(`${label}: the error is the server's 401 invalid_token`, /invalid_token|401/.test(err ?? ""), err);
    if (label === "unknown token") c.fact("connectError", err);
  }
  // The right token still works afterwards.
  const ok = await connect(cfg.master);
  c.success("master whoami after the refusals", await call(ok, "whoami"));
}

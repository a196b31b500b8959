// The coordination tools other than reservations — wait_for_activity,
// fail_task, block_task's blockedCause and check_messages' stuck work —
// with the official MCP TypeScript SDK, over Streamable HTTP ("http") or
// over stdio ("stdio": bob's VP_TOKEN in a `vantagepeers stdio` child on
// the HTTP server's data dir, so alice's HTTP writes wake bob's wait in
// another process).
//
//   VP_E2E_CONFIG='{"url":"...","tokens":{"alice":"...","bob":"..."},"bin":"...","dataDir":"..."}' \
//     node clients/coordination.mjs <http|stdio>
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { call, config, connectHTTP, listAllTools, main } from "./lib.mjs";

const TOOLS = ["wait_for_activity", "fail_task", "block_task", "check_messages"];
const scenario = process.argv[2];
const cfg = config();
if (!["http", "stdio"].includes(scenario)) {
  console.error("usage: node clients/coordination.mjs <http|stdio>");
  process.exit(2);
}

await main("coordination", scenario, async (c) => {
  const alice = await connectHTTP(cfg.url, cfg.tokens.alice, { name: "vp-e2e-coord-alice" });
  let bob;
  if (scenario === "http") {
    bob = await connectHTTP(cfg.url, cfg.tokens.bob, { name: "vp-e2e-coord-bob" });
  } else {
    bob = new Client({ name: "vp-e2e-coord-bob-stdio", version: "1.0.0" });
    await bob.connect(new StdioClientTransport({ command: cfg.bin, args: ["stdio", "--data-dir", cfg.dataDir],
      env: { VP_LOG_LEVEL: "warn", VP_TOKEN: cfg.tokens.bob }, stderr: "pipe" }));
  }
  try {
    const names = (await listAllTools(bob)).map((t) => t.name); // output schemas cached: results are validated
    c.eq("tools/list: the coordination tools", TOOLS.filter((n) => !names.includes(n)), []);
    await run(c, alice, bob);
  } finally {
    await Promise.allSettled([alice.close(), bob.close()]);
  }
});

async function run(c, alice, bob) {
  // Drain what bob has, then hold: alice's message ends the wait.
  const first = await call(bob, "wait_for_activity", { timeoutMs: 0 });
  c.success("wait_for_activity at once", first);
  const since = first.data?.since;
  c.ok("wait_for_activity returns a since", typeof since === "number", first.data);
  const waiting = call(bob, "wait_for_activity", { timeoutMs: 15000, since, kinds: ["messages"] });
  await new Promise((r) => setTimeout(r, 300));
  const began = Date.now();
  const sent = await call(alice, "send_message", { channel: "bob", content: "coordination e2e: wake up" });
  c.success("send_message (alice to bob)", sent);
  const woke = await waiting;
  const wokeMs = Date.now() - began;
  c.success("wait_for_activity woken", woke);
  c.eq("the wait answered with alice's message, not at its timeout", [woke.data?.timedOut, woke.data?.items?.[0]?.kind, woke.data?.items?.[0]?.from],
    [false, "messages", "alice"]);
  c.ok("woken within 5 s of the send", wokeMs < 5000, wokeMs);
  c.fact("wakeMs", wokeMs);
  const unread = await call(bob, "check_messages", {});
  c.ok("the message is still unread", (unread.data?.messages ?? []).some((m) => m.content === "coordination e2e: wake up"), unread.data);
  c.ok("check_messages carries stuckInProgress and peersStuckOnYou", Array.isArray(unread.data?.stuckInProgress ?? []) &&
    Array.isArray(unread.data?.peersStuckOnYou ?? []), unread.data);
  const quiet = await call(bob, "wait_for_activity", { timeoutMs: 200, since: woke.data?.since, kinds: ["messages"] });
  c.eq("nothing new: answered at the timeout", [quiet.data?.timedOut, quiet.data?.count], [true, 0]);

  // A task bob cannot do: blocked on a cause, then failed.
  const created = await call(alice, "create_task", { title: "coordination e2e: vendor sync", assignedTo: "bob", priority: "low" });
  c.success("create_task (alice for bob)", created);
  const taskId = created.data?._id ?? created.data?.taskId;
  c.ok("a task id", typeof taskId === "string" && taskId.length > 0, created.data);
  const blocked = await call(bob, "block_task", { taskId, reason: "waiting for the vendor", blockedCause: "external" });
  c.success("block_task with a blockedCause", blocked);
  const bad = await call(bob, "block_task", { taskId, reason: "x", blockedCause: "boredom" });
  c.toolError("block_task refuses an unknown blockedCause, naming it", bad, "blockedCause");
  const failed = await call(bob, "fail_task", { taskId, reason: "the vendor API was removed" });
  c.success("fail_task", failed);
  const got = await call(alice, "get_task", { taskId });
  c.eq("the task is failed, with its reason", [got.data?.status, got.data?.failReason], ["failed", "the vendor API was removed"]);
  const again = await call(bob, "fail_task", { taskId, reason: "again" });
  c.ok("a failed task cannot fail again", again.isError === true, again.text);
}

// The ten-minute path of a new user, with the official MCP TypeScript SDK:
// two agents configured by `vantagepeers connect` — alice over Streamable
// HTTP, bob over stdio (the SDK spawns the binary as the host would) —
// coordinate through a message and a task.
//
//   VP_E2E_CONFIG='{"alice":{<claude-code http entry>},"bob":{<claude-code stdio entry>}}' \
//     node clients/firsthour.mjs firsthour
//   VP_E2E_CONFIG='{"as":"alice","agent":{<http entry>}}' node clients/firsthour.mjs remote
//
// Each entry is the "vantagepeers" server of the .mcp.json `connect` printed,
// used as a host would use it: url + headers, or command + args + env.
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { call, config, main } from "./lib.mjs";

const scenario = process.argv[2] ?? "firsthour";
const cfg = config();

/** Connects a client the way an MCP host reads a configuration entry. */
async function connectEntry(name, entry) {
  const client = new Client({ name: `vp-firsthour-${name}`, version: "1.0.0" });
  let transport;
  if (entry.url) {
    transport = new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers ?? {} } });
  } else {
    transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...entry.env, VP_LOG_LEVEL: "warn" }, stderr: "pipe" });
  }
  await client.connect(transport);
  return client;
}

// remote: the one entry `connect --remote --url` printed for a deployment
// ({"agent": <entry>, "as": "<name>"}): the host connects with it as given
// and acts as that agent at once.
async function remote(c) {
  const agent = await connectEntry(cfg.as, cfg.agent);
  try {
    const who = await call(agent, "whoami");
    c.eq(`${cfg.as}: whoami names the agent, not an admin`, [who.data?.orchestratorId, who.data?.admin], [cfg.as, false]);
    const sum = await call(agent, "set_summary", { summary: "Connected to the deployment" });
    c.success(`${cfg.as}: set_summary`, sum);
    const peers = await call(agent, "list_peers", { fields: "lite" });
    c.eq(`${cfg.as}: list_peers shows the agent`, (peers.data?.items ?? []).map((p) => p.orchestratorId), [cfg.as]);
  } finally {
    await agent.close();
  }
}

await main("firsthour", scenario, scenario === "remote" ? remote : async (c) => {
  const alice = await connectEntry("alice", cfg.alice);
  const bob = await connectEntry("bob", cfg.bob);
  try {
    // ---- alice starts: presence, a message, a task ----
    const who = await call(alice, "whoami");
    c.eq("alice: whoami is alice, not an admin", [who.data?.orchestratorId, who.data?.admin], ["alice", false]);
    const sum = await call(alice, "set_summary", { summary: "Setting up the release checklist" });
    c.success("alice: set_summary with no instanceId and no orchestratorId", sum);
    c.eq("alice: set_summary defaults the instance", sum.data?.profile?.instanceId, "main");

    const sent = await call(alice, "send_message", { channel: "bob", content: "Bob, can you take the changelog task?" });
    c.success("alice: send_message to bob", sent);
    c.eq("alice: bob has not started yet, so he is flagged, not refused", sent.data?.unknownRecipients, ["bob"]);
    c.ok("alice: the warning says what to check", /check the spelling/.test(sent.data?.warning ?? ""), sent.data?.warning);

    const created = await call(alice, "create_task", { title: "Write the changelog for 1.0", assignedTo: "bob", priority: "high" });
    c.success("alice: create_task for bob", created);
    const taskId = created.data?._id;
    c.eq("alice: the task is bob's, created by alice", [created.data?.assignedTo, created.data?.createdBy, created.data?.status], ["bob", "alice", "todo"]);

    const mem = await call(alice, "store_memory", { namespace: "workspace/release", type: "decision", content: "Release 1.0 ships on Friday." });
    c.success("alice: store_memory in workspace/ (the default grants)", mem);

    // ---- bob, over stdio: inbox, claim, complete ----
    const bsum = await call(bob, "set_summary", { summary: "Picking up my tasks" });
    c.success("bob: set_summary", bsum);
    const inbox = await call(bob, "check_messages");
    c.success("bob: check_messages", inbox);
    const msgs = inbox.data?.messages ?? [];
    c.eq("bob: one message, from alice", msgs.map((m) => [m.from, m.content]), [["alice", "Bob, can you take the changelog task?"]]);
    const read = await call(bob, "mark_as_read", { receiptIds: msgs.map((m) => m.receiptId) });
    c.eq("bob: mark_as_read marked 1", read.data?.marked, 1);

    const found = await call(bob, "hybrid_search", { query: "when does the release ship" });
    c.success("bob: hybrid_search reads workspace/", found);
    c.ok("bob: finds alice's decision", (found.data?.results ?? []).some((r) => /Friday/.test(r.content ?? "")), found.data);

    const out = await call(bob, "checkout_task", { taskId });
    c.eq("bob: checkout_task claims it", out.data?.claimed, true);
    const again = await call(alice, "checkout_task", { taskId, callerOrchestrator: "alice" });
    c.ok("alice: cannot claim it too", again.isError || again.data?.claimed === false, again.text);
    const done = await call(bob, "complete_task", { taskId, completionNote: "Changelog written" });
    c.success("bob: complete_task", done);
    await call(bob, "send_message", { channel: "alice", content: "Changelog done." });

    // ---- alice sees it ----
    const got = await call(alice, "get_task", { taskId });
    c.eq("alice: the task is done", got.data?.status, "done");
    const back = await call(alice, "check_messages");
    c.eq("alice: bob's reply waits for her", (back.data?.messages ?? []).map((m) => [m.from, m.content]), [["bob", "Changelog done."]]);
    const peers = await call(alice, "list_peers", { fields: "lite" });
    const names = (peers.data?.items ?? []).map((p) => p.orchestratorId);
    c.ok("alice: list_peers shows both agents", names.includes("alice") && names.includes("bob"), names);
  } finally {
    await Promise.allSettled([alice.close(), bob.close()]);
  }
});

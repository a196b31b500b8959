// End-to-end scenario over stdio with the official MCP TypeScript SDK
// (Client + StdioClientTransport spawning the built binary).
//
//   VP_E2E_CONFIG='{"bin":"/tmp/x/vantagepeers","dataDir":"/tmp/x/data","marker":"...","token":"(optional)"}' \
//     node clients/stdio.mjs <owner|token>
//
// owner: the process owner acts as the local admin of tenant "default" (no
// token), so from/recipient are passed explicitly. token: VP_TOKEN is set to
// a token acting as alice only.
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { call, config, listAllTools, main, missingTools } from "./lib.mjs";

const scenario = process.argv[2];
const cfg = config();
if (!["owner", "token"].includes(scenario)) {
  console.error("usage: node clients/stdio.mjs <owner|token>");
  process.exit(2);
}

await main("stdio", scenario, async (c) => {
  const env = { VP_LOG_LEVEL: "warn" };
  if (cfg.masterToken) env.VP_MASTER_TOKEN = cfg.masterToken;
  if (scenario === "token") env.VP_TOKEN = cfg.token;
  const transport = new StdioClientTransport({
    command: cfg.bin,
    args: ["stdio", "--data-dir", cfg.dataDir],
    env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d.toString()));
  const client = new Client({ name: "vp-e2e-stdio", version: "1.0.0" });
  try {
    await client.connect(transport);
    c.eq("initialize: serverInfo.name", client.getServerVersion()?.name, "vantagepeers");
    const pid = transport.pid;
    c.ok("the server process was spawned", typeof pid === "number" && pid > 0, pid);

    const tools = await listAllTools(client);
    c.fact("toolCount", tools.length);
    c.eq("tools/list: all 12 profile and messaging tools are there", missingTools(tools.map((t) => t.name)), []);
    c.ok("tools/list: every tool has a description and annotations",
      tools.every((t) => (t.description ?? "").length > 0 && t.annotations && Object.keys(t.annotations).length > 0));

    if (scenario === "owner") await owner(c, client);
    else await asToken(c, client);
  } finally {
    await client.close().catch(() => {});
    c.fact("stderrTail", stderr.slice(-2000));
  }
});

async function owner(c, client) {
  const who = await call(client, "whoami");
  c.success("whoami", who);
  c.eq("whoami: tenant default", who.data?.tenant, "default");
  c.eq("whoami: local admin", who.data?.admin, true);

  const missing = await call(client, "send_message", { channel: "bob", content: "no from" });
  c.toolError("send without from: the local admin has no default identity, names from", missing, "from");

  const content = `stdio round trip ${cfg.marker}`;
  const sent = await call(client, "send_message", { from: "alice", channel: "bob", content });
  c.success("send_message from alice to bob", sent);
  const id = sent.data?.messageId;
  c.fact("messageId", id);

  const inbox = await call(client, "check_messages", { recipient: "bob" });
  c.success("check_messages recipient bob", inbox);
  const mine = (inbox.data?.messages ?? []).filter((m) => m.messageId === id);
  c.eq("check_messages: the message is there once", mine.length, 1);
  c.eq("check_messages: content and sender", [mine[0]?.content, mine[0]?.from], [content, "alice"]);
  const rcp = mine[0]?.receiptId;

  const mark = await call(client, "mark_as_read", { receiptIds: [rcp] });
  c.success("mark_as_read", mark);
  c.eq("mark_as_read: marked 1", mark.data?.marked, 1);
  const after = await call(client, "check_messages", { recipient: "bob" });
  c.eq("check_messages after mark: the message is gone", (after.data?.messages ?? []).filter((m) => m.messageId === id), []);

  const got = await call(client, "get_message", { messageId: id });
  c.eq("get_message: content", got.data?.content, content);
  const list = await call(client, "list_messages", { from: "alice", limit: 5 });
  c.ok("list_messages from alice includes it", (list.data?.items ?? []).some((m) => m._id === id), list.data);
}

async function asToken(c, client) {
  const who = await call(client, "whoami");
  c.eq("whoami: acts as alice", [who.data?.orchestratorId, who.data?.admin], ["alice", false]);
  const sent = await call(client, "send_message", { channel: "bob", content: `from alice's token ${cfg.marker}` });
  c.success("send_message defaults from to alice", sent);
  const got = await call(client, "get_message", { messageId: sent.data?.messageId });
  c.eq("the message is from alice", got.data?.from, "alice");
  c.toolError("VP_TOKEN restricts: may not send as bob", await call(client, "send_message", { from: "bob", channel: "carol", content: "x" }), "from");
  c.toolError("VP_TOKEN restricts: may not read bob's inbox", await call(client, "check_messages", { recipient: "bob" }), "recipient");
}

// One "model" session of the Pacerelle bridge, with the official MCP
// TypeScript SDK: the Go test functions/pacerelle (TestEndToEnd) spawns
// the bridge binary through StdioClientTransport and plays an assistant
// following the start_pacerelle prompt: status, checkpoints, then wait,
// answer, mark processed, until told to stop or until the bridge dies.
//
//   PACERELLE_E2E='{"bin":"...","env":{...},"doneFile":"...","longTask":"req-0000"}' node clients/pacerelle.mjs
//
// Prints one JSON summary on stdout (also when the bridge is killed).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync } from "node:fs";

const cfg = JSON.parse(process.env.PACERELLE_E2E);
const out = { processed: [], replied: [], skippedReplies: [], resumed: [], pairings: [], tools: [], prompt: "", resources: [],
  startPending: null, startCheckpoints: [], errors: [], ended: "" };

function parse(res) {
  const text = res.content?.[0]?.text ?? "";
  if (res.isError) throw new Error("tool error: " + text);
  return JSON.parse(text);
}

const transport = new StdioClientTransport({ command: cfg.bin, args: [], env: cfg.env, stderr: "pipe" });
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d.toString()));
const client = new Client({ name: "pacerelle-e2e", version: "1.0.0" });
const call = async (name, args = {}) => parse(await client.callTool({ name, arguments: args }));

// A test that gives up on the session asks for its account.
process.on("SIGTERM", () => {
  out.ended = out.ended || "terminated by the test";
  out.stderrTail = stderr.slice(-4000);
  console.log(JSON.stringify(out));
  process.exit(0);
});

try {
  await client.connect(transport);
  out.pid = transport.pid;
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  out.prompt = (await client.getPrompt({ name: "start_pacerelle" })).messages[0].content.text.slice(0, 40);
  out.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
  const st = await call("get_status");
  out.startPending = st.pending;
  const cps = await call("get_checkpoints");
  out.startCheckpoints = cps.checkpoints.map((c) => c.sourceMessageId);
  // Resume: an active checkpoint is finished first.
  for (const c of cps.checkpoints) {
    out.resumed.push(c.sourceMessageId);
    await call("save_checkpoint", { sourceMessageId: c.sourceMessageId, summary: c.summary + "; resumed", nextAction: "none", status: "completed" });
    await call("mark_processed", { messageId: c.sourceMessageId, note: "resumed from a checkpoint" });
    out.processed.push(c.sourceMessageId);
  }
  let idle = 0;
  // The first wait of a session has no cursor (unfinished requests come
  // back); later ones continue from the last page.
  let cursor = "";
  for (;;) {
    const args = { timeoutMs: 1500, limit: 50 };
    if (cursor) args.afterCursor = cursor;
    const page = await call("wait_for_messages", args);
    cursor = page.cursor || cursor;
    if (page.messages.length === 0) {
      if (existsSync(cfg.doneFile) && ++idle >= 2) break;
      continue;
    }
    idle = 0;
    // Replies already made (persisted before sending) are not made twice.
    const hist = await call("get_history", { limit: 50 });
    const answered = new Set(hist.replies.map((r) => r.sourceMessageId));
    for (const m of page.messages) {
      if (answered.has(m.id)) out.skippedReplies.push(m.id);
      else {
        const r = await call("send_message", { text: "re: " + m.text, sourceMessageId: m.id });
        out.replied.push(m.id);
        if (!r.id) out.errors.push("send_message returned no id");
      }
      if (m.id === cfg.longTask && !out.resumed.includes(m.id)) {
        // Long work: leave it to the next session.
        await call("save_checkpoint", { sourceMessageId: m.id, summary: "step 1 of 2 done", nextAction: "finish step 2", hostSessionLabel: "session-" + out.pid });
        continue;
      }
      await call("mark_processed", { messageId: m.id });
      out.processed.push(m.id);
    }
  }
  const end = await call("get_status");
  out.pairings = end.pairings;
  out.endStatus = end;
  out.ended = "done";
} catch (e) {
  out.ended = "error: " + (e?.message ?? String(e));
}
out.stderrTail = stderr.slice(-2000);
try {
  await client.close();
} catch {}
console.log(JSON.stringify(out));
process.exit(0);

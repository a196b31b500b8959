// The TypeScript side of tests/bench's stdio-ts transport: the official MCP
// TypeScript SDK client (the client of Claude Code, Claude Desktop, Cursor
// and the MCP Inspector) driving `vantagepeers stdio`, as those hosts do.
//
//   node clients/bench-stdio.mjs BIN DATA_DIR
//
// The server inherits this process's environment and stderr. Once connected
// and the tools are listed (so that callTool validates structuredContent
// against each outputSchema, as hosts do), it prints {"serverPid":N}; then,
// for each line {"tool":"...","arguments":{...}} on stdin, it makes that call
// and prints {"ms":LATENCY,"result":STRUCTURED} or {"ms":...,"error":"..."}.
// The latency is callTool's, from request to validated result; printing the
// answer is not timed.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, dataDir] = process.argv.slice(2);
if (!bin || !dataDir) {
  console.error("usage: node clients/bench-stdio.mjs BIN DATA_DIR");
  process.exit(2);
}
const transport = new StdioClientTransport({
  command: bin,
  args: ["stdio", "--data-dir", dataDir],
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "vantagepeers-bench-ts", version: "0" });
await client.connect(transport);
await client.listTools();
console.log(JSON.stringify({ serverPid: transport.pid }));

for await (const line of createInterface({ input: process.stdin })) {
  const { tool, arguments: args } = JSON.parse(line);
  let answer;
  const t0 = process.hrtime.bigint();
  try {
    const res = await client.callTool({ name: tool, arguments: args });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    answer = res.isError
      ? { ms, error: res.content.map((c) => c.text ?? "").join("; ") }
      : { ms, result: res.structuredContent };
  } catch (err) {
    answer = { ms: Number(process.hrtime.bigint() - t0) / 1e6, error: String(err?.message ?? err) };
  }
  console.log(JSON.stringify(answer));
}
await client.close();

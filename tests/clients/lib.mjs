// Shared helpers for the end-to-end client scripts. Every script runs one
// scenario against a real VantagePeers server with the official MCP
// TypeScript SDK, records named checks, prints one JSON summary on stdout
// and exits non-zero when any check failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { isDeepStrictEqual } from "node:util";

// The profile and messaging tools. Other capabilities add tools of their
// own, so the checks require these to be present rather than to be all.
export const EXPECTED_TOOLS = [
  "check_messages",
  "delete_message",
  "get_message",
  "get_profile",
  "list_broadcast_status",
  "list_messages",
  "list_peers",
  "mark_as_read",
  "send_message",
  "set_summary",
  "update_profile",
  "whoami",
];

/** The configuration the Go test passes in VP_E2E_CONFIG (JSON). */
export function config() {
  const raw = process.env.VP_E2E_CONFIG;
  if (!raw) throw new Error("VP_E2E_CONFIG is not set (the Go tests in tests/ set it)");
  return JSON.parse(raw);
}

/** The expected tools that names (a list of tool names) lacks. */
export function missingTools(names) {
  return EXPECTED_TOOLS.filter((n) => !names.includes(n));
}

/** Checks collects named assertions and facts for the summary. */
export class Checks {
  constructor(client, scenario) {
    this.client = client;
    this.scenario = scenario;
    this.passed = [];
    this.failures = [];
    this.facts = {};
  }

  ok(name, cond, detail) {
    if (cond) this.passed.push(name);
    else this.failures.push({ check: name, detail: detail === undefined ? null : detail });
    return !!cond;
  }

  eq(name, got, want) {
    return this.ok(name, isDeepStrictEqual(got, want), { got, want });
  }

  /** The result must be an isError result whose text contains every needle. */
  toolError(name, res, ...needles) {
    const text = res.text ?? "";
    const missing = needles.filter((n) => !text.includes(n));
    return this.ok(name, res.isError === true && missing.length === 0, { isError: res.isError, text, missing });
  }

  /** The result must not be an error. */
  success(name, res) {
    return this.ok(name, res.isError !== true && res.threw === undefined, { text: res.text, threw: res.threw });
  }

  fact(key, value) {
    this.facts[key] = value;
  }
}

/**
 * callTool calls a tool and returns {isError, text, data, raw, threw}: data is
 * structuredContent, or the first text block parsed as JSON when that works.
 * A protocol-level failure (an exception from the SDK) is returned in threw.
 */
export async function call(client, name, args = {}) {
  let raw;
  try {
    raw = await client.callTool({ name, arguments: args });
  } catch (e) {
    return { isError: true, threw: String(e?.message ?? e), text: String(e?.message ?? e), data: undefined, raw: undefined };
  }
  const text = (raw.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  let data = raw.structuredContent;
  if (data === undefined && !raw.isError) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }
  return { isError: raw.isError === true, text, data, raw };
}

/** Connects a Client over Streamable HTTP with a bearer token (and an optional X-VP-Tenant). */
export async function connectHTTP(url, token, { tenant, name = "vp-e2e-http" } = {}) {
  const headers = { Authorization: `Bearer ${token}` };
  if (tenant) headers["X-VP-Tenant"] = tenant;
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

/** Lists every tool, following pagination. */
export async function listAllTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * Runs fn(checks) and prints the summary. Exits 1 when a check failed or fn
 * threw, 0 otherwise.
 */
export async function main(clientName, scenario, fn) {
  const checks = new Checks(clientName, scenario);
  const started = Date.now();
  let error = null;
  try {
    await fn(checks);
  } catch (e) {
    error = String(e?.stack ?? e);
  }
  const summary = {
    client: clientName,
    scenario,
    ok: error === null && checks.failures.length === 0,
    passed: checks.passed.length,
    failed: checks.failures.length,
    failures: checks.failures,
    error,
    facts: checks.facts,
    checks: checks.passed,
    durationMs: Date.now() - started,
  };
  process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  // Let pending I/O (transport close) finish, then exit with the verdict.
  setTimeout(() => process.exit(summary.ok ? 0 : 1), 10).unref();
  process.exitCode = summary.ok ? 0 : 1;
}

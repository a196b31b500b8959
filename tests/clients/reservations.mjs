// Path reservations over Streamable HTTP with the official MCP TypeScript
// SDK: alice reserves, bob collides (nothing of his reserved), checks,
// lists; alice renews, narrows, releases; bob then reserves.
//
//   VP_E2E_CONFIG='{"url":"http://127.0.0.1:PORT/mcp","tokens":{"alice":"...","bob":"..."},"seed":N}' \
//     node clients/reservations.mjs reservations
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { call, config, connectHTTP, listAllTools, main } from "./lib.mjs";

const TOOLS = ["reserve_paths", "renew_reservations", "release_paths", "check_paths", "list_reservations"];
const cfg = config();

// Scenario "stdio": bob is a `vantagepeers stdio` child (VP_TOKEN) on the
// HTTP server's data dir; alice stays on HTTP.
const scenario = process.argv[2] ?? "reservations";

await main("reservations", scenario, async (c) => {
  const alice = await connectHTTP(cfg.url, cfg.tokens.alice, { name: "vp-e2e-rsv-alice" });
  let bob;
  if (scenario === "stdio") {
    bob = new Client({ name: "vp-e2e-rsv-bob-stdio", version: "1.0.0" });
    await bob.connect(new StdioClientTransport({ command: cfg.bin, args: ["stdio", "--data-dir", cfg.dataDir],
      env: { VP_LOG_LEVEL: "warn", VP_TOKEN: cfg.tokens.bob }, stderr: "pipe" }));
  } else {
    bob = await connectHTTP(cfg.url, cfg.tokens.bob, { name: "vp-e2e-rsv-bob" });
  }
  try {
    for (const cl of [alice, bob]) {
      const names = (await listAllTools(cl)).map((t) => t.name); // output schemas cached: results are validated
      c.eq("tools/list: the reservation tools", TOOLS.filter((n) => !names.includes(n)), []);
    }
    await run(c, alice, bob);
  } finally {
    await Promise.allSettled([alice.close(), bob.close()]);
  }
});

async function run(c, alice, bob) {
  const project = "e2e/web";
  const a = await call(alice, "reserve_paths", { project, paths: ["src/api/**", "Makefile"], reason: "auth refactor", ttlMinutes: 30 });
  c.success("reserve_paths (alice)", a);
  const rsv = a.data?.reservation;
  c.eq("alice reserved, exclusive, 30 min", [a.data?.reserved, rsv?.holder, rsv?.exclusive, rsv?.ttlMinutes], [true, "alice", true, 30]);
  c.fact("reservationId", rsv?._id);
  c.fact("expiresAt", rsv?.expiresAt);

  const b = await call(bob, "reserve_paths", { project, paths: ["docs/x.md", "src/api/users.go"] });
  c.success("reserve_paths (bob)", b);
  c.eq("bob: not reserved, one conflict with alice's glob", [b.data?.reserved, b.data?.conflicts?.length, b.data?.conflicts?.[0]?.holder,
    b.data?.conflicts?.[0]?.paths, b.data?.conflicts?.[0]?.reason], [false, 1, "alice", ["src/api/**"], "auth refactor"]);

  const chk = await call(bob, "check_paths", { project, paths: ["src/api/users.go", "docs/**"] });
  c.success("check_paths (bob)", chk);
  c.eq("check_paths: alice's reservation, its expiry in ms", [chk.data?.conflicts?.[0]?.reservationId, chk.data?.conflicts?.[0]?.expiresAt],
    [rsv?._id, rsv?.expiresAt]);
  const mine = await call(alice, "check_paths", { project, paths: ["src/api/users.go"] });
  c.eq("check_paths: no conflict with oneself", mine.data?.conflicts, []);

  const bad = await call(bob, "reserve_paths", { project, paths: ["src/[ab].go"] });
  c.toolError("reserve_paths: a character class is refused naming the field", bad, "paths[0]");

  // List: the seeded ones (the Go side made cfg.seed) and alice's.
  let items = [];
  let cursor;
  do {
    const page = await call(bob, "list_reservations", { project: "e2e/seed", limit: 7, ...(cursor ? { cursor } : {}) });
    c.success("list_reservations page", page);
    items.push(...(page.data?.items ?? []));
    cursor = page.data?.nextCursor;
  } while (cursor);
  c.eq("list_reservations: seed N, list N", items.length, cfg.seed);
  const byPath = await call(bob, "list_reservations", { project, path: "src/**" });
  c.eq("list_reservations by path", (byPath.data?.items ?? []).map((r) => r._id), [rsv?._id]);

  const ren = await call(alice, "renew_reservations", { project, ttlMinutes: 120 });
  c.success("renew_reservations", ren);
  c.eq("renewed to 120 min", [ren.data?.renewed?.length, ren.data?.renewed?.[0]?.ttlMinutes], [1, 120]);
  c.ok("renewed: later expiry", ren.data?.renewed?.[0]?.expiresAt > rsv?.expiresAt, ren.data);

  const narrow = await call(alice, "release_paths", { project, paths: ["Makefile"] });
  c.eq("release_paths by glob narrows", narrow.data?.narrowed?.[0]?.paths, ["src/api/**"]);
  const rel = await call(alice, "release_paths", { reservationIds: [rsv?._id] });
  c.eq("release_paths by id", rel.data?.released, [rsv?._id]);

  const again = await call(bob, "reserve_paths", { project, paths: ["src/api/users.go", "Makefile"], exclusive: false });
  c.eq("bob reserves after the release", again.data?.reserved, true);
}

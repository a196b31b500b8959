// End-to-end GitHub scenario over Streamable HTTP with the official MCP
// TypeScript SDK, as orchestrator sigma: map a repository, deliver a signed
// `issues.opened` webhook (signed here with node:crypto, independently of
// the Go side's signing), follow the Issue Resolution Protocol it starts
// (issue, mission of 14 tasks, message, list), complete steps T0..T6 in
// order, then auto-link a fix task whose note carries a commit SHA.
//
//   VP_E2E_CONFIG='{"url":"http://127.0.0.1:PORT/mcp","webhookUrl":"http://127.0.0.1:PORT/webhooks/github",
//                   "token":"...","secret":"...","repo":"acme/widgets","issueNumber":1,"project":"widgets",
//                   "issueUrl":"..."}' node clients/github.mjs github
//
// Prints a JSON summary on stdout; exits non-zero on any failed check. The
// Go test (github_test.go) checks the comments GitHub (its fake) received.
import { createHmac, randomUUID } from "node:crypto";
import { call, config, connectHTTP, listAllTools, main } from "./lib.mjs";

const scenario = process.argv[2] ?? "github";
const cfg = config();
if (scenario !== "github") {
  console.error("usage: node clients/github.mjs github");
  process.exit(2);
}

const TOOLS = [
  "add_repo_mapping", "get_repo_mapping", "list_repo_mappings", "get_issue", "list_issues",
  "get_mission", "get_task", "create_task", "complete_task", "check_messages",
];

await main("github", scenario, async (c) => {
  const sigma = await connectHTTP(cfg.url, cfg.token, { name: "vp-e2e-github-sigma" });
  try {
    // Cache tool definitions so that callTool validates structuredContent
    // against each tool's outputSchema, as real clients do.
    const names = (await listAllTools(sigma)).map((t) => t.name);
    c.eq("tools/list: the GitHub, mission and task tools are present", TOOLS.filter((n) => !names.includes(n)), []);
    await run(c, sigma);
  } finally {
    await sigma.close();
  }
});

/** The X-Hub-Signature-256 GitHub sends: HMAC-SHA256 of the raw body. */
function sign(secret, body) {
  return "sha256=" + createHmac("sha256", secret).update(body, "utf8").digest("hex");
}

/** POSTs a webhook delivery; returns {status, json}. */
async function deliver(event, deliveryId, body, signature) {
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": "GitHub-Hookshot/e2e",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": deliveryId,
    "X-GitHub-Hook-ID": "424242",
  };
  if (signature !== undefined) headers["X-Hub-Signature-256"] = signature;
  const res = await fetch(cfg.webhookUrl, { method: "POST", headers, body });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { unparsable: text };
  }
  return { status: res.status, json };
}

/** Polls fn until pred(result) holds or ms pass; returns the last result. */
async function until(fn, pred, ms = 10000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (pred(last) || Date.now() > deadline) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(c, sigma) {
  const { repo, issueNumber: n, project } = cfg;

  // ---- 1. the mapping ----
  const added = await call(sigma, "add_repo_mapping", { repo, orchestrator: "sigma", project });
  c.success("add_repo_mapping", added);
  c.eq("add_repo_mapping: repo, orchestrator, project, active", [added.data?.repo, added.data?.orchestrator, added.data?.project, added.data?.active],
    [repo, "sigma", project, true]);
  const got = await call(sigma, "get_repo_mapping", { repo });
  c.success("get_repo_mapping", got);
  c.eq("get_repo_mapping returns the mapping added", [got.data?._id, got.data?.repo, got.data?.orchestrator, got.data?.project],
    [added.data?._id, repo, "sigma", project]);
  c.fact("mappingId", added.data?._id);

  // ---- 2. the webhook ----
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const sender = { login: "octo-owner", id: 583231, type: "User" };
  const payload = {
    action: "opened",
    issue: {
      number: n,
      title: "Widgets render blank after upgrade",
      body: "Steps: upgrade to 2.0, open /widgets — the page is blank.",
      html_url: cfg.issueUrl,
      user: sender,
      author_association: "OWNER",
      state: "open",
      created_at: now,
      updated_at: now,
      labels: [{ name: "bug" }],
      comments: 0,
    },
    repository: { full_name: repo, name: repo.split("/")[1], owner: { login: repo.split("/")[0], type: "Organization" } },
    sender,
  };
  const body = JSON.stringify(payload);
  const deliveryId = randomUUID();
  const first = await deliver("issues", deliveryId, body, sign(cfg.secret, body));
  c.eq("webhook issues.opened: 202 accepted", [first.status, first.json?.outcome, first.json?.delivery], [202, "accepted", deliveryId]);
  const again = await deliver("issues", deliveryId, body, sign(cfg.secret, body));
  c.eq("webhook redelivery (same X-GitHub-Delivery): 200 duplicate", [again.status, again.json?.outcome], [200, "duplicate"]);
  const forged = await deliver("issues", randomUUID(), body, sign(cfg.secret + "-wrong", body));
  c.eq("webhook with a wrong signature: 401", forged.status, 401);
  c.ok("webhook with a wrong signature: an error body", typeof forged.json?.error === "string" && forged.json.error.length > 0, forged.json);
  const unsigned = await deliver("issues", randomUUID(), body, undefined);
  c.eq("webhook without a signature: 401", unsigned.status, 401);
  const tampered = await deliver("issues", randomUUID(), body.replace("blank", "black"), sign(cfg.secret, body));
  c.eq("webhook whose body was changed after signing: 401", tampered.status, 401);
  c.fact("webhookStatuses", [first.status, again.status, forged.status, unsigned.status, tampered.status]);

  // ---- 3. the issue, its mission, the message, the list ----
  // The webhook answers once the issue is recorded; the server's outbox
  // starts the mission right after (milliseconds).
  const iss = await until(() => call(sigma, "get_issue", { repo, issueNumber: n }), (r) => typeof r.data?.missionId === "string");
  c.success("get_issue", iss);
  c.eq("get_issue: in_progress with the IRP for sigma", [iss.data?.status, iss.data?.automation, iss.data?.orchestrator, iss.data?.project],
    ["in_progress", "irp", "sigma", project]);
  const missionId = iss.data?.missionId;
  c.ok("get_issue: has a missionId", typeof missionId === "string" && missionId.length > 0, iss.data);
  c.eq("get_issue: title and author from the payload", [iss.data?.title, iss.data?.author, iss.data?.authorAssociation],
    [payload.issue.title, "octo-owner", "OWNER"]);
  c.fact("issueId", iss.data?._id);
  c.fact("missionId", missionId);
  if (!missionId) throw new Error("no mission started");

  const view = await call(sigma, "get_mission", { missionId });
  c.success("get_mission", view);
  const tasks = view.data?.tasks ?? [];
  c.eq("get_mission: 14 tasks", tasks.length, 14);
  c.eq("get_mission: pilot sigma, project mapped", [view.data?.pilot, view.data?.project], ["sigma", project]);
  c.ok("get_mission: T0 is Acknowledge", (tasks[0]?.title ?? "").startsWith(`[#${n}] T0 — Acknowledge`), tasks[0]?.title);
  c.ok("get_mission: T13 is Close Issue", (tasks[13]?.title ?? "").startsWith(`[#${n}] T13 — Close Issue`), tasks[13]?.title);
  c.ok("get_mission: every title is [#N] Tk — …", tasks.every((t, k) => (t.title ?? "").startsWith(`[#${n}] T${k} — `)), tasks.map((t) => t.title));
  c.ok("get_mission: every task assigned to sigma, todo", tasks.every((t) => t.assignedTo === "sigma" && t.status === "todo"),
    tasks.map((t) => [t.assignedTo, t.status]));
  c.fact("taskTitles", tasks.map((t) => t.title));
  c.fact("pilot", view.data?.pilot);
  if (tasks.length !== 14) throw new Error("the mission does not have 14 tasks");

  const inbox = await call(sigma, "check_messages", {});
  c.success("check_messages (sigma)", inbox);
  const about = (inbox.data?.messages ?? []).filter((m) => (m.content ?? "").includes(`${repo}#${n}`));
  c.eq("check_messages: one message about the issue", about.length, 1);
  c.ok("check_messages: it names the mission", (about[0]?.content ?? "").includes(missionId), about[0]);

  const listed = await call(sigma, "list_issues", { project });
  c.success("list_issues", listed);
  c.eq("list_issues {project}: count 1", listed.data?.count, 1);
  c.eq("list_issues {project}: the issue", (listed.data?.issues ?? []).map((i) => [i.repo, i.issueNumber, i.status]), [[repo, n, "in_progress"]]);

  // ---- 4. T0..T6, in order ----
  const ids = tasks.map((t) => t._id);
  // T7 cannot be completed while T6 (its dependency) is not done.
  const early = await call(sigma, "complete_task", { taskId: ids[7], completionNote: "too early" });
  c.toolError("complete_task T7 before T6: refused, naming T6", early, ids[6]);
  const notes = [];
  for (let k = 0; k <= 6; k++) {
    const tk = await call(sigma, "get_task", { taskId: ids[k] });
    c.success(`get_task T${k}`, tk);
    c.eq(`T${k}: dependsOn the previous step`, tk.data?.dependsOn ?? [], k === 0 ? [] : [ids[k - 1]]);
    // Notes without "fix" and without hex runs: only the fix task below
    // may move the issue to fixed.
    const note = `Step T${k} complete: checked by sigma in the e2e run`;
    const done = await call(sigma, "complete_task", { taskId: ids[k], completionNote: note });
    c.success(`complete_task T${k}`, done);
    c.eq(`T${k}: done with the note`, [done.data?.status, done.data?.completionNote], ["done", note]);
    notes.push(note);
  }
  c.fact("stepsCompleted", 7);
  const mid = await call(sigma, "get_mission", { missionId });
  c.eq("get_mission after T6: 7 done, 7 todo", mid.data?.taskCounts, { done: 7, todo: 7 });
  const still = await call(sigma, "get_issue", { repo, issueNumber: n });
  c.eq("get_issue after T6: still in_progress", still.data?.status, "in_progress");

  // ---- 5. auto-linking: a fix task outside the mission ----
  const created = await call(sigma, "create_task", {
    title: `Fix #${n} — e2e`, project, assignedTo: "sigma", priority: "high",
    description: "the fix, linked to the issue by its title",
  });
  c.success("create_task Fix #N", created);
  const fixId = created.data?._id;
  c.fact("fixTaskId", fixId);
  const fixed = await call(sigma, "complete_task", { taskId: fixId, completionNote: "fixed in 3f2a9c1" });
  c.success("complete_task Fix #N", fixed);
  const after = await until(
    () => call(sigma, "get_issue", { repo, issueNumber: n }),
    (r) => r.data?.status === "fixed" && (r.data?.linkedTaskIds ?? []).includes(fixId),
  );
  c.success("get_issue after the fix", after);
  c.eq("get_issue after the fix: status fixed", after.data?.status, "fixed");
  c.eq("get_issue after the fix: commitShas", after.data?.commitShas, ["3f2a9c1"]);
  c.ok("get_issue after the fix: the fix task is linked", (after.data?.linkedTaskIds ?? []).includes(fixId), after.data?.linkedTaskIds);
  c.ok("get_issue after the fix: fixedAt set", typeof after.data?.fixedAt === "number", after.data);
  c.fact("issueStatus", after.data?.status);
  c.fact("commitShas", after.data?.commitShas);
  c.fact("linkedTaskIds", after.data?.linkedTaskIds);
}

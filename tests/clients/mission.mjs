// End-to-end mission scenario over Streamable HTTP with the official MCP
// TypeScript SDK: a mission instantiated from the built-in repo-fix-v1
// template, two agents (alice and bob, each with a token of its own) racing
// to check out every task, then start/pause/resume/block/complete each in
// dependency order; the mission completes by itself.
//
//   VP_E2E_CONFIG='{"url":"http://127.0.0.1:PORT/mcp","tenant":"...","tokens":{"alice":"...","bob":"..."}}' \
//     node clients/mission.mjs mission
//
// Prints a JSON summary on stdout; exits non-zero on any failed check.
import { call, config, connectHTTP, listAllTools, main } from "./lib.mjs";

const scenario = process.argv[2] ?? "mission";
const cfg = config();
if (scenario !== "mission") {
  console.error("usage: node clients/mission.mjs mission");
  process.exit(2);
}

const TOOLS = [
  "create_mission", "get_mission", "get_mission_template", "instantiate_template_into_mission",
  "checkout_task", "start_task", "pause_task", "resume_task", "block_task", "complete_task", "get_task",
];

await main("mission", scenario, async (c) => {
  const alice = await connectHTTP(cfg.url, cfg.tokens.alice, { name: "vp-e2e-mission-alice" });
  const bob = await connectHTTP(cfg.url, cfg.tokens.bob, { name: "vp-e2e-mission-bob" });
  const agents = { alice, bob };
  try {
    for (const [name, cl] of Object.entries(agents)) {
      // Cache tool definitions so that callTool validates structuredContent
      // against each tool's outputSchema, as real clients do.
      const names = (await listAllTools(cl)).map((t) => t.name);
      c.eq(`tools/list (${name}): mission and task tools present`, TOOLS.filter((n) => !names.includes(n)), []);
    }
    await run(c, agents);
  } finally {
    await Promise.allSettled([alice.close(), bob.close()]);
  }
});

async function run(c, agents) {
  const { alice, bob } = agents;
  const other = (name) => (name === "alice" ? "bob" : "alice");

  // ---- the template and the mission ----
  const tpl = await call(alice, "get_mission_template", { name: "repo-fix-v1" });
  c.success("get_mission_template repo-fix-v1", tpl);
  const steps = tpl.data?.steps ?? [];
  c.eq("template: 10 steps", steps.length, 10);

  const created = await call(alice, "create_mission", {
    name: "fix-issue-142", project: "e2e/mission", priority: "high", pilot: "alice", agents: ["alice", "bob"],
    brief: "Fix issue #142 in acme/widgets with the repo-fix protocol",
  });
  c.success("create_mission", created);
  const missionId = created.data?._id;
  c.ok("create_mission: has an _id", typeof missionId === "string" && missionId.length > 0, created.data);
  c.eq("create_mission: createdBy is the token's identity", created.data?.createdBy, "alice");
  c.fact("missionId", missionId);

  const inst = await call(alice, "instantiate_template_into_mission", {
    templateName: "repo-fix-v1", missionId, titlePrefix: "[#142]", context: { issueNumber: "142", repo: "acme/widgets" },
  });
  c.success("instantiate_template_into_mission", inst);
  const taskIds = inst.data?.taskIds ?? [];
  c.eq("instantiate: one task per step", [inst.data?.count, taskIds.length], [steps.length, steps.length]);
  c.fact("taskCount", taskIds.length);
  if (taskIds.length === 0) throw new Error("no tasks instantiated");

  let view = await call(bob, "get_mission", { missionId });
  c.success("get_mission (bob, before)", view);
  c.eq("get_mission: tasks in step order", (view.data?.tasks ?? []).map((t) => t._id), taskIds);
  c.eq("get_mission: all todo", view.data?.taskCounts, { todo: taskIds.length });
  c.ok("get_mission: not complete yet", view.data?.status !== "complete", view.data?.status);
  const first = view.data?.tasks?.[0];
  c.eq("instantiate: placeholders filled", first?.description?.includes("acme/widgets"), true);
  c.eq("instantiate: title prefixed", first?.title, "[#142] Search KB");
  const second = view.data?.tasks?.[1];
  c.eq("instantiate: dependencies wired", second?.dependsOn, [taskIds[0]]);

  // A task whose dependency is not done cannot be checked out.
  const early = await call(bob, "checkout_task", { taskId: taskIds[1] });
  c.success("checkout_task before its dependency is done answers", early);
  c.eq("checkout_task before its dependency is done: not claimed", early.data?.claimed, false);
  c.ok("checkout_task before its dependency is done: reason names it", (early.data?.reason ?? "").includes(taskIds[0]), early.data);

  // ---- every task, in dependency order ----
  const winners = [];
  const segments = [];
  for (let i = 0; i < taskIds.length; i++) {
    const id = taskIds[i];
    const tag = `task ${i + 1}`;

    // Both agents race to claim it: exactly one wins.
    const [ra, rb] = await Promise.all([
      call(alice, "checkout_task", { taskId: id, callerInstance: "alice-laptop" }),
      call(bob, "checkout_task", { taskId: id, callerInstance: "bob-laptop" }),
    ]);
    c.success(`${tag}: alice's checkout answers`, ra);
    c.success(`${tag}: bob's checkout answers`, rb);
    const claims = [ra.data?.claimed, rb.data?.claimed];
    c.eq(`${tag}: exactly one checkout claimed`, claims.filter((x) => x === true).length, 1);
    const owner = ra.data?.claimed === true ? "alice" : "bob";
    const loser = other(owner);
    const won = owner === "alice" ? ra : rb;
    const lost = owner === "alice" ? rb : ra;
    winners.push(owner);
    c.eq(`${tag}: the winner owns it in_progress`, [won.data?.task?.assignedTo, won.data?.task?.status], [owner, "in_progress"]);
    c.ok(`${tag}: the loser gets a reason`, lost.data?.claimed === false && (lost.data?.reason ?? "").length > 0, lost.data);
    const me = agents[owner];
    const them = agents[loser];

    // A second checkout by the other agent is refused too.
    const again = await call(them, "checkout_task", { taskId: id });
    c.eq(`${tag}: a later checkout by ${loser} is not claimed`, again.data?.claimed, false);
    c.ok(`${tag}: ... and says it is in progress`, (again.data?.reason ?? "").includes("in_progress"), again.data);

    // Checkout opened the work segment: start_task is refused.
    c.toolError(`${tag}: start_task while in progress refused`, await call(me, "start_task", { taskId: id }), "already in progress");

    // Pause: back to todo, paused; nobody can claim it, start_task names resume_task.
    const paused = await call(me, "pause_task", { taskId: id });
    c.success(`${tag}: pause_task`, paused);
    c.eq(`${tag}: paused is todo + paused`, [paused.data?.status, paused.data?.paused], ["todo", true]);
    const grab = await call(them, "checkout_task", { taskId: id });
    c.eq(`${tag}: checkout of a paused task by ${loser} not claimed`, grab.data?.claimed, false);
    c.ok(`${tag}: ... the reason says paused`, (grab.data?.reason ?? "").includes("paused"), grab.data);
    c.toolError(`${tag}: start_task on a paused task names resume_task`, await call(me, "start_task", { taskId: id }), "resume_task");
    c.toolError(`${tag}: resume_task by ${loser} is forbidden`, await call(them, "resume_task", { taskId: id }), owner);

    // Resume, then block and start again (start_task unblocks).
    const resumed = await call(me, "resume_task", { taskId: id });
    c.success(`${tag}: resume_task`, resumed);
    c.eq(`${tag}: resumed is in_progress`, [resumed.data?.status, resumed.data?.paused ?? false], ["in_progress", false]);
    c.toolError(`${tag}: resume_task when not paused refused`, await call(me, "resume_task", { taskId: id }), "not paused");
    const blocked = await call(me, "block_task", { taskId: id, reason: `waiting on CI for ${id}` });
    c.eq(`${tag}: block_task`, blocked.data?.status, "blocked");
    const started = await call(me, "start_task", { taskId: id });
    c.success(`${tag}: start_task`, started);
    c.eq(`${tag}: started is in_progress`, started.data?.status, "in_progress");

    // Complete: the note is required.
    c.toolError(`${tag}: complete_task without a note refused`, await call(me, "complete_task", { taskId: id, completionNote: "" }), "completionNote");
    if (i < taskIds.length - 1) {
      const mid = await call(them, "get_mission", { missionId });
      c.ok(`${tag}: mission still open before its last task`, mid.data?.status !== "complete", mid.data?.status);
    }
    const note = `${owner} finished step ${i + 1}: proof in PR #47, tests pass`;
    const done = await call(me, "complete_task", { taskId: id, completionNote: note });
    c.success(`${tag}: complete_task`, done);
    c.eq(`${tag}: done with the note`, [done.data?.status, done.data?.completionNote, done.data?.assignedTo], ["done", note, owner]);
    c.ok(`${tag}: completedAt set`, typeof done.data?.completedAt === "number", done.data);
    const segs = done.data?.workSegments ?? [];
    segments.push(segs.length);
    c.eq(`${tag}: three work segments (checkout, resume, start), all closed`, [segs.length, segs.every((s) => typeof s.end === "number")], [3, true]);
    c.ok(`${tag}: actualMinutes computed`, typeof done.data?.actualMinutes === "number" && done.data.actualMinutes >= 0, done.data);
    const late = await call(them, "checkout_task", { taskId: id });
    c.ok(`${tag}: a done task cannot be checked out`, late.data?.claimed === false && (late.data?.reason ?? "").includes("done"), late.data);
  }
  c.fact("winners", winners);
  c.fact("workSegments", segments);

  // ---- the mission completed by itself ----
  view = await call(alice, "get_mission", { missionId });
  c.success("get_mission (after)", view);
  c.eq("mission: status complete", view.data?.status, "complete");
  c.eq("mission: auto-completed", view.data?.autoCompleted, true);
  c.ok("mission: completedAt set", typeof view.data?.completedAt === "number", view.data);
  c.eq("mission: every task done", view.data?.taskCounts, { done: taskIds.length });
  c.eq("mission: assignees are the winners", (view.data?.tasks ?? []).map((t) => t.assignedTo), winners);
  c.fact("missionStatus", view.data?.status);
  c.fact("autoCompleted", view.data?.autoCompleted);
  c.fact("taskCounts", view.data?.taskCounts);
  c.fact("assignees", (view.data?.tasks ?? []).map((t) => t.assignedTo));
  c.fact("completionNotes", (view.data?.tasks ?? []).map((t) => t.completionNote));
}

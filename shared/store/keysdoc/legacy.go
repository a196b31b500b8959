package keysdoc

// legacyRows are KEYS.md rows of entities whose keys are not declared with
// shared/store/table yet. Each one leaves this list when its package
// declares its table.
var legacyRows = []string{
	`| task by id | table | ` + "`" + `T#t#TASK#<taskId>` + "`" + ` | ` + "`" + `TASK` + "`" + ` | carries work segments; every change is IfVersion (checkout: one Put) |`,
	`| tasks of an assignee in a status, newest-updated first | gsi1 | ` + "`" + `T#t#TASGN#<assignee>#<status>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<taskId>` + "`" + ` | key moves on status/assignee change; several statuses = one partition each, merged by sort key |`,
	`| tasks in a status, tenant-wide | gsi2 | ` + "`" + `T#t#TSTAT#<status>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<taskId>` + "`" + ` | list_tasks without assignee/project/creator (all = 6 partitions merged) |`,
	`| tasks by creator | gsi3 | ` + "`" + `T#t#TBY#<createdBy>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<taskId>` + "`" + ` | status filtered on read |`,
	`| tasks by project | gsi4 | ` + "`" + `T#t#TPROJ#<project>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<taskId>` + "`" + ` | sparse; status filtered on read |`,
	`| mission by id, with its task links | table | ` + "`" + `T#t#MISSION#<missionId>` + "`" + ` | ` + "`" + `MISSION` + "`" + `, ` + "`" + `TASK#<taskId>` + "`" + ` | a task joins with a rewrite of the mission item, so auto-completion and joins exclude each other |`,
	`| missions by project | gsi1 | ` + "`" + `T#t#MPROJ#<project>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<missionId>` + "`" + ` | |`,
	`| missions by pilot | gsi2 | ` + "`" + `T#t#MPILOT#<pilot>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<missionId>` + "`" + ` | |`,
	`| missions by status | gsi3 | ` + "`" + `T#t#MSTAT#<status>` + "`" + ` | ` + "`" + `<updatedAt 13 digits>#<missionId>` + "`" + ` | one partition per status, merged |`,
	`| mission template by name | table | ` + "`" + `T#t#MTPL#<name>` + "`" + ` | ` + "`" + `MTPL` + "`" + ` | built-ins seeded IfNotExists on first read/use |`,
	`| recurring template by id | table | ` + "`" + `T#t#RECUR#<recId>` + "`" + ` | ` + "`" + `RECUR` + "`" + ` | |`,
	`| recurring templates of the tenant | gsi1 | ` + "`" + `T#t#RECURS` + "`" + ` | ` + "`" + `<recId>` + "`" + ` | |`,
	`| fired recurring slot | table | ` + "`" + `T#t#RECFIRE#<recId>#<slot 13 digits>` + "`" + ` | ` + "`" + `FIRE` + "`" + ` | TTL 30 days; IfNotExists in the transaction that creates the task and advances the template |`,
	`| keyword-search backfill checkpoint | table | ` + "`" + `T#t#IDXFILL` + "`" + ` | ` + "`" + `coord-index-v1` + "`" + ` | run id, source, last position; deleted when the backfill finishes |`,
	`| due recurring templates, all tenants | gsi2 | ` + "`" + `RECURRING_DUE` + "`" + ` | ` + "`" + `<nextRunAt 13 digits>#<tenant>#<recId>` + "`" + ` | **server-side only** (the scheduler); sparse while paused; fired tasks use their tenant's keys |`,
}

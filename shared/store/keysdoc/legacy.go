package keysdoc

// legacyRows are KEYS.md rows of entities whose keys are not declared with
// shared/store/table yet. Each one leaves this list when its package
// declares its table.
var legacyRows = []string{
	`| keyword-search backfill checkpoint | table | ` + "`" + `T#t#IDXFILL` + "`" + ` | ` + "`" + `coord-index-v1` + "`" + ` | run id, source, last position; deleted when the backfill finishes |`,
}

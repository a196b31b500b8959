package mcpserver

import (
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// remedies turns a domain remedy (vp.Error.Remedy) into the hint a model
// reads: the domain says what must happen, this layer says which tool does
// it. A remedy without an entry adds nothing.
var remedies = map[string]string{
	// Tasks and missions: these hints finish the domain's sentence, so the
	// tool error reads as it always did.
	"task.resume":             ": use resume_task to reopen it",
	"task.resume_by_owner":    " with resume_task",
	"task.pause_or_complete":  " Use pause_task to step away or complete_task to finish",
	"task.start":              ": resume_task only reopens a task paused with pause_task; use start_task",
	"task.cancel":             " (cancel it with update_task instead)",
	"mission.cancel":          `: use update_mission {"missionId":...,"status":"cancelled","cancelReason":"..."}`,
	"mission.template.create": "; create one with update_mission_template",
}

// withRemedy appends the hint of err's remedy, if any, to msg. A hint that
// starts with a space or punctuation finishes the domain's own sentence and
// is appended as it is; any other follows " — ".
func withRemedy(msg string, err error) string {
	hint, ok := remedies[vp.RemedyOf(err)]
	switch {
	case !ok || hint == "":
	case strings.ContainsRune(" :;,.)", rune(hint[0])):
		return msg + hint
	default:
		return msg + " — " + hint
	}
	return msg
}

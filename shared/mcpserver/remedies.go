package mcpserver

import (
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// remedies turns a domain remedy (vp.Error.Remedy) into what a model
// reads: the domain says what must happen, this layer says which tool does
// it. A remedy without an entry adds nothing. An entry is either the tool
// that replaces the remedy's name inside the domain's sentence ("use
// mandate.accept to accept a mandate"), or the clause that finishes the
// sentence; either way the tool error reads as it did before the hints
// left the domain.
var remedies = map[string]string{
	mandate.RemedyAccept:      "accept_mandate",
	mandate.RemedyUpdate:      "update_mandate",
	mandate.RemedySettle:      "settle_mandate",
	memory.RemedyGetMemory:    ": use get_memory",
	"task.resume":             ": use resume_task to reopen it",
	"task.resume_by_owner":    " with resume_task",
	"task.pause_or_complete":  " Use pause_task to step away or complete_task to finish",
	"task.start":              ": resume_task only reopens a task paused with pause_task; use start_task",
	"task.cancel":             " (cancel it with update_task instead)",
	"mission.cancel":          `: use update_mission {"missionId":...,"status":"cancelled","cancelReason":"..."}`,
	"mission.template.create": "; create one with update_mission_template",
}

// withRemedy puts the hint of err's remedy, if any, into msg.
func withRemedy(msg string, err error) string {
	remedy := vp.RemedyOf(err)
	hint, ok := remedies[remedy]
	switch {
	case !ok:
		return msg
	case strings.Contains(msg, remedy):
		return strings.ReplaceAll(msg, remedy, hint)
	}
	return msg + hint
}

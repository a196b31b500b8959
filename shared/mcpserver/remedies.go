package mcpserver

import (
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// remedies names the tool that carries out each domain remedy
// (vp.Error.Remedy): the domain says what must happen, this layer says
// which tool does it. A remedy without an entry adds nothing.
var remedies = map[string]string{
	mandate.RemedyAccept:   "accept_mandate",
	mandate.RemedyUpdate:   "update_mandate",
	mandate.RemedySettle:   "settle_mandate",
	memory.RemedyGetMemory: "get_memory",
}

// withRemedy puts the tool of err's remedy, if any, into msg: in place of
// the remedy's name where the domain's sentence names it ("use
// mandate.accept to accept a mandate"), else as a last clause (": use
// get_memory"). Either way the text reads as the domain wrote it before
// the hints moved here.
func withRemedy(msg string, err error) string {
	remedy := vp.RemedyOf(err)
	tool, ok := remedies[remedy]
	switch {
	case !ok:
		return msg
	case strings.Contains(msg, remedy):
		return strings.ReplaceAll(msg, remedy, tool)
	}
	return msg + ": use " + tool
}

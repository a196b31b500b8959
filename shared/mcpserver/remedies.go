package mcpserver

import (
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// remedies turns a domain remedy (vp.Error.Remedy) into the hint a model
// reads: the domain says what must happen, this layer says which tool does
// it. A remedy without an entry adds nothing.
var remedies = map[string]string{
	// The mandate errors name their remedy inside the sentence ("use
	// mandate.accept to accept a mandate"); the tool takes its place.
	mandate.RemedyAccept: "accept_mandate",
	mandate.RemedyUpdate: "update_mandate",
	mandate.RemedySettle: "settle_mandate",
}

// withRemedy puts the hint of err's remedy, if any, into msg: in place of
// the remedy's name where the domain's sentence names it, else after it.
func withRemedy(msg string, err error) string {
	remedy := vp.RemedyOf(err)
	hint, ok := remedies[remedy]
	switch {
	case !ok:
		return msg
	case strings.Contains(msg, remedy):
		return strings.ReplaceAll(msg, remedy, hint)
	}
	return msg + " — " + hint
}

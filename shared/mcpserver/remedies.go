package mcpserver

import "github.com/vantagepeers/vantagepeers/shared/vp"

// remedies turns a domain remedy (vp.Error.Remedy) into the hint a model
// reads: the domain says what must happen, this layer says which tool does
// it. A remedy without an entry adds nothing.
var remedies = map[string]string{}

// withRemedy appends the hint of err's remedy, if any, to msg.
func withRemedy(msg string, err error) string {
	if hint, ok := remedies[vp.RemedyOf(err)]; ok {
		return msg + " — " + hint
	}
	return msg
}

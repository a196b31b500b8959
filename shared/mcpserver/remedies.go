package mcpserver

import "github.com/vantagepeers/vantagepeers/shared/vp"

// remedies turns a domain remedy (vp.Error.Remedy) into the hint a model
// reads: the domain says what must happen, this layer says which tool does
// it. A remedy without an entry adds nothing.
var remedies = map[string]string{
	"memory.get": "use get_memory", // memory.RemedyGetMemory
}

// withRemedy appends the hint of err's remedy, if any, to msg. The hint
// follows the message as its last clause ("…, not an episode: use
// get_memory"), as the domain wrote these hints before they moved here, so
// that what a model reads did not change.
func withRemedy(msg string, err error) string {
	if hint, ok := remedies[vp.RemedyOf(err)]; ok {
		return msg + ": " + hint
	}
	return msg
}

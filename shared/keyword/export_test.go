package keyword

import (
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/search"
)

// MessagesOf is messaging over s's store, clock and index, wired as the
// binaries wire it: what the keyword-search tests send is what s searches.
func MessagesOf(s *Service) *message.Service {
	return message.New(message.Options{Store: s.st, Cursors: s.cursors, Now: s.now,
		Directory: profile.New(profile.Options{Store: s.st, Now: s.now}),
		Search:    &search.Writer{Index: s.idx, Logger: s.log}})
}

package component

import (
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// RevisionKey exposes a revision's key to the key test.
func RevisionKey(tenant, id string, rev int) store.Key {
	return revisions.Key(tenant, vp.Component{ID: id, Revision: rev})
}

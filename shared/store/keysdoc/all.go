package keysdoc

import (
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
)

// All is every declared table, in the order KEYS.md lists them. A package
// that declares tables exports them as a Tables() []table.Doc function and
// is listed here.
func All() []table.Doc {
	var docs []table.Doc
	for _, pkg := range [][]table.Doc{task.Tables(), mission.Tables(), recurring.Tables()} {
		docs = append(docs, pkg...)
	}
	return docs
}

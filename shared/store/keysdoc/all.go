package keysdoc

import (
	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

// All is every declared table, in the order KEYS.md lists them. A package
// that declares tables exports them as a Tables() []table.Doc function and
// is listed here.
func All() []table.Doc {
	var docs []table.Doc
	for _, pkg := range [][]table.Doc{
		outbox.Tables(),
		memory.Tables(),
		auth.Tables(),
		oauth.Tables(),
		ratelimit.Tables(),
		storequeue.Tables(),
		briefing.Tables(),
		component.Tables(),
		businessunit.Tables(),
		diary.Tables(),
		profile.Tables(),
		message.Tables(),
		mandate.Tables(),
		iframe.Tables(),
		task.Tables(),
		mission.Tables(),
		recurring.Tables(),
		keyword.Tables(),
		issue.Tables(),
		webhooks.Tables(),
		github.Tables(),
		errormon.Tables(),
		okfsvc.Tables(),
		relay.Tables(),
	} {
		docs = append(docs, pkg...)
	}
	return docs
}

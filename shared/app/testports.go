package app

import (
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/issue"
)

// The ports only tests set: the issues' and the error monitor's tests
// drive an in-memory GitHub and tune the monitor, through Build like
// every other test (shared/app/apptest), not with a wiring of their own.

func (p *Ports) issuesGitHub() issue.GitHub {
	if p.IssuesGitHub != nil {
		return p.IssuesGitHub
	}
	return p.GitHub
}

func (p *Ports) errorsOptions(o errormon.Options) errormon.Options {
	if p.ErrorsGitHub != nil {
		o.GitHub = p.ErrorsGitHub
	}
	if p.TuneErrors != nil {
		p.TuneErrors(&o)
	}
	return o
}

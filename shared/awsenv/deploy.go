package awsenv

//go:generate go run ../app/deploygen

// Route is an HTTP route as the CDK stack needs it: a copy of the route
// table (httpapi.Routes) without its handlers, generated into deploy_gen.go
// because the CDK module cannot compile the handlers' packages.
type Route struct {
	Path string
	// Methods allowed; empty for any.
	Methods  []string
	Auth     string
	Function string
}

// Schedule is a cron job of the catalogue (jobs.Catalogue) as the CDK
// stack needs it, generated into deploy_gen.go: its 5-field UTC cron, the
// same as an EventBridge schedule expression, and the function it runs in.
type Schedule struct {
	Job         string
	Cron        string
	EventBridge string
	Function    string
}

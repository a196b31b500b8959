package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// TestScheduleRules: the stack's EventBridge rules are the catalogue's cron
// jobs (awsenv.Schedules): each at its schedule, on its function, with an
// event the scheduler reads — a scheduled event whose time is the rule's
// and whose detail names the job.
func TestScheduleRules(t *testing.T) {
	m := synth(t, CustomerProps{})
	for _, sc := range awsenv.Schedules() {
		_, rule := m.one("AWS::Events::Rule", title(routeID(sc.Job))+"Schedule")
		p := rule.Properties
		if p["ScheduleExpression"] != sc.EventBridge || p["State"] == "DISABLED" {
			t.Errorf("%s: schedule %v (state %v), want %s", sc.Job, p["ScheduleExpression"], p["State"], sc.EventBridge)
		}
		fnID, _ := m.function(sc.Function)
		targets, _ := p["Targets"].([]any)
		if len(targets) != 1 {
			t.Fatalf("%s: targets %v", sc.Job, p["Targets"])
		}
		target := targets[0].(map[string]any)
		if !strings.Contains(fmt.Sprint(target["Arn"]), fnID) {
			t.Errorf("%s: target %v, want %s", sc.Job, target["Arn"], fnID)
		}
		tr, _ := target["InputTransformer"].(map[string]any)
		if tr == nil {
			t.Fatalf("%s: no input transformer: %v", sc.Job, target)
		}
		paths := fmt.Sprint(tr["InputPathsMap"])
		tmpl := fmt.Sprint(tr["InputTemplate"])
		if !strings.Contains(paths, "$.time") || !strings.Contains(tmpl, `"detail":{"job":"`+sc.Job+`"}`) ||
			!strings.Contains(tmpl, `"detail-type":"Scheduled Event"`) {
			t.Errorf("%s: input paths %s, template %s", sc.Job, paths, tmpl)
		}
	}
}

// TestRoutesFollowTheTable: the HTTP API's routes are the route table's
// (awsenv.Routes, generated from httpapi.Routes), each on its function.
func TestRoutesFollowTheTable(t *testing.T) {
	m := synth(t, CustomerProps{})
	fnOf := map[string]string{}
	for _, fn := range Functions {
		id, _ := m.function(fn)
		fnOf[id] = fn
	}
	got := map[string]string{}
	httpAPI, _ := m.one("AWS::ApiGatewayV2::Api", "Api")
	for _, id := range m.ofType("AWS::ApiGatewayV2::Route") {
		p := m.Resources[id].Properties
		if fmt.Sprint(p["ApiId"]) != fmt.Sprint(map[string]any{"Ref": httpAPI}) {
			continue // the Pacerelle WebSocket API's (TestPacerelleWebSocket)
		}
		target := p["Target"].(map[string]any)["Fn::Join"].([]any)[1].([]any)
		integID := target[1].(map[string]any)["Ref"].(string)
		fnID := m.Resources[integID].Properties["IntegrationUri"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		got[p["RouteKey"].(string)] = fnOf[fnID]
	}
	want := map[string]string{}
	for _, r := range awsenv.Routes() {
		methods := r.Methods
		if len(methods) == 0 {
			methods = []string{"ANY"}
		}
		for _, meth := range methods {
			want[meth+" "+r.Path] = r.Function
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes = %v\nwant (table) %v", got, want)
	}
}

// TestFunctionSizes: memory and timeout come from awsenv.Functions.
func TestFunctionSizes(t *testing.T) {
	m := synth(t, CustomerProps{})
	for _, f := range awsenv.Functions() {
		_, fn := m.one("AWS::Lambda::Function", title(f.Name)+"Function")
		p := fn.Properties
		if p["MemorySize"] != float64(f.MemoryMB) || p["Timeout"] != f.Timeout.Seconds() {
			t.Errorf("%s: memory %v, timeout %v; want %d MB, %v", f.Name, p["MemorySize"], p["Timeout"], f.MemoryMB, f.Timeout)
		}
	}
}

func TestRoutes(t *testing.T) {
	m := synth(t, CustomerProps{})
	fnOf := map[string]string{}
	for _, fn := range Functions {
		id, _ := m.function(fn)
		fnOf[id] = fn
	}
	got := map[string]string{}
	httpAPI, _ := m.one("AWS::ApiGatewayV2::Api", "Api")
	for _, id := range m.ofType("AWS::ApiGatewayV2::Route") {
		p := m.Resources[id].Properties
		if fmt.Sprint(p["ApiId"]) != fmt.Sprint(map[string]any{"Ref": httpAPI}) {
			continue // the Pacerelle WebSocket API's (TestPacerelleWebSocket)
		}
		target := p["Target"].(map[string]any)["Fn::Join"].([]any)[1].([]any)
		integID := target[1].(map[string]any)["Ref"].(string)
		integ := m.Resources[integID].Properties
		if integ["PayloadFormatVersion"] != "2.0" || integ["IntegrationType"] != "AWS_PROXY" {
			t.Errorf("%s: integration %v", p["RouteKey"], integ)
		}
		fnID := integ["IntegrationUri"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		got[p["RouteKey"].(string)] = fnOf[fnID]
	}
	want := map[string]string{
		"ANY /mcp":                       awsenv.FuncMCP,
		"ANY /.well-known/{proxy+}":      awsenv.FuncOAuth,
		"ANY /oauth/{proxy+}":            awsenv.FuncOAuth,
		"ANY /admin/{proxy+}":            awsenv.FuncOAuth,
		"ANY /issueBearerFromClerk":      awsenv.FuncOAuth,
		"GET /health":                    awsenv.FuncOAuth,
		"POST /webhooks/github":          awsenv.FuncWebhooks,
		"POST /webhooks/github/{tenant}": awsenv.FuncWebhooks,
		"GET /okf/download":              awsenv.FuncMCP,
		"ANY /pacerelle/{proxy+}":        awsenv.FuncMCP,
		"GET /pacerelle/app/{proxy+}":    awsenv.FuncMCP,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes = %v\nwant     %v", got, want)
	}
	for _, o := range []string{"McpUrl", "OAuthMetadataUrl", "MasterTokenCommand"} {
		if _, ok := m.Outputs[o]; !ok {
			t.Errorf("no output %s", o)
		}
	}
	if !strings.Contains(fmt.Sprint(m.Outputs["OAuthMetadataUrl"]), "/.well-known/oauth-authorization-server") {
		t.Errorf("OAuthMetadataUrl = %v", m.Outputs["OAuthMetadataUrl"])
	}
}

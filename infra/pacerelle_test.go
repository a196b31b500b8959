package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// TestPacerelleWebSocket: the WebSocket API has the three routes, each
// integrated with the doorbell function ($default returning its answer),
// one auto-deployed stage, and its wss URL as an output; exactly the
// functions marked Pushes get the management endpoint and
// execute-api:ManageConnections on POST @connections of this API's stage,
// and no other function any execute-api action.
func TestPacerelleWebSocket(t *testing.T) {
	m := synth(t, CustomerProps{})
	apiID, api := m.one("AWS::ApiGatewayV2::Api", "PacerelleWebSocket")
	if api.Properties["ProtocolType"] != "WEBSOCKET" || api.Properties["RouteSelectionExpression"] != "$request.body.action" {
		t.Fatalf("api %v", api.Properties)
	}
	doorbellID, _ := m.function(awsenv.FuncDoorbell)
	routes := map[string]resource{}
	for _, id := range m.ofType("AWS::ApiGatewayV2::Route") {
		r := m.Resources[id]
		if fmt.Sprint(r.Properties["ApiId"]) == fmt.Sprint(map[string]any{"Ref": apiID}) {
			routes[r.Properties["RouteKey"].(string)] = r
		}
	}
	if keys := slices.Sorted(func(yield func(string) bool) {
		for k := range routes {
			if !yield(k) {
				return
			}
		}
	}); !reflect.DeepEqual(keys, []string{"$connect", "$default", "$disconnect"}) {
		t.Fatalf("routes %v", keys)
	}
	for key, r := range routes {
		// Target is {"Fn::Join":["",["integrations/",{"Ref":<integration>}]]}.
		target := fmt.Sprint(r.Properties["Target"])
		_, ref, _ := strings.Cut(target, "Ref:")
		integ, ok := m.Resources[strings.TrimRight(strings.Fields(ref + " ")[0], "]")]
		if !ok || integ.Type != "AWS::ApiGatewayV2::Integration" || integ.Properties["IntegrationType"] != "AWS_PROXY" ||
			!strings.Contains(fmt.Sprint(integ.Properties["IntegrationUri"]), doorbellID) {
			t.Errorf("%s: target %s -> %+v, want a proxy integration of the doorbell function", key, target, integ.Properties)
		}
		if r.Properties["AuthorizationType"] != nil && r.Properties["AuthorizationType"] != "NONE" {
			t.Errorf("%s: authorization %v: $connect is checked by the function", key, r.Properties["AuthorizationType"])
		}
	}
	if routes["$default"].Properties["RouteResponseSelectionExpression"] != "$default" {
		t.Errorf("$default does not return its answer: %v", routes["$default"].Properties)
	}
	_, stage := m.one("AWS::ApiGatewayV2::Stage", "PacerelleStage")
	if stage.Properties["StageName"] != PacerelleStage || stage.Properties["AutoDeploy"] != true {
		t.Errorf("stage %v", stage.Properties)
	}
	if url := fmt.Sprint(m.Outputs["PacerelleWebSocketUrl"]["Value"]); !strings.Contains(url, "wss://") || !strings.Contains(url, apiID) {
		t.Errorf("PacerelleWebSocketUrl = %s", url)
	}

	want := `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":execute-api:eu-west-1:123456789012:",{"Ref":"` + apiID + `"},"/prod/POST/@connections/*"]]}`
	var pushers []string
	for _, f := range awsenv.Functions() {
		fnID, roleID := m.function(f.Name)
		env := m.Resources[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		endpoint, hasEndpoint := env[awsenv.EnvPacerelleConnections]
		var push []statement
		for _, s := range m.policy(roleID) {
			if slices.ContainsFunc(s.Actions, func(a string) bool { return strings.HasPrefix(a, "execute-api:") }) {
				push = append(push, s)
			}
		}
		if !f.Pushes {
			if hasEndpoint || len(push) != 0 {
				t.Errorf("%s: endpoint %v, statements %+v; want none", f.Name, endpoint, push)
			}
			continue
		}
		pushers = append(pushers, f.Name)
		if e := fmt.Sprint(endpoint); !strings.Contains(e, "https://") || !strings.Contains(e, apiID) || !strings.Contains(e, "/prod") {
			t.Errorf("%s: %s = %s, want the stage's https callback URL", f.Name, awsenv.EnvPacerelleConnections, e)
		}
		if len(push) != 1 || push[0].Sid != "PacerellePush" || !reflect.DeepEqual(push[0].Actions, PushActions) || !reflect.DeepEqual(push[0].Resources, []string{want}) {
			t.Errorf("%s: statements %+v\nwant one PacerellePush: %v on %s", f.Name, push, PushActions, want)
		}
	}
	if !reflect.DeepEqual(pushers, []string{awsenv.FuncMCP, awsenv.FuncScheduler}) {
		t.Errorf("pushing functions %v, want mcp and scheduler", pushers)
	}
	// The doorbell's table rows expire: the table has the store's TTL.
	_, table := m.one("AWS::DynamoDB::Table", "Table")
	if ttl := fmt.Sprint(table.Properties["TimeToLiveSpecification"]); !strings.Contains(ttl, "Enabled:true") {
		t.Errorf("table TTL %s", ttl)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
)

// TestMain closes the jsii runtime, or it leaves /tmp/jsii-runtime.* behind.
func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// tmpl is a synthesized template as JSON.
type tmpl struct {
	t         *testing.T
	Resources map[string]resource
	Outputs   map[string]map[string]any
	assert    assertions.Template
}

type resource struct {
	Type           string
	Properties     map[string]any
	DeletionPolicy string
	DependsOn      any
}

func synth(t *testing.T, p CustomerProps) *tmpl {
	t.Helper()
	if p.Customer == "" {
		p.Customer = "acme"
	}
	dir := t.TempDir()
	for _, fn := range Functions {
		// The assets are packaged as they are: any file will do here.
		if err := os.WriteFile(filepath.Join(dir, fn+".zip"), []byte("PK\x05\x06"+strings.Repeat("\x00", 18)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.LambdaDir = dir
	p.Env = &awscdk.Environment{Region: jsii.String("eu-west-1"), Account: jsii.String("123456789012")}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	s := NewCustomerStack(app, StackName(p.Customer), &p)
	a := assertions.Template_FromStack(s.Stack, nil)
	raw, err := json.Marshal(a.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	out := &tmpl{t: t, assert: a}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// ofType returns the logical ids of the resources of a type, sorted.
func (m *tmpl) ofType(typ string) []string {
	var ids []string
	for id, r := range m.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// one returns the only resource of typ whose logical id starts with prefix.
func (m *tmpl) one(typ, prefix string) (string, resource) {
	m.t.Helper()
	var found []string
	for _, id := range m.ofType(typ) {
		if strings.HasPrefix(id, prefix) {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		m.t.Fatalf("want one %s named %s*, found %v", typ, prefix, found)
	}
	return found[0], m.Resources[found[0]]
}

// function returns the logical id of a function and of its role.
func (m *tmpl) function(name string) (fnID, roleID string) {
	m.t.Helper()
	fnID, fn := m.one("AWS::Lambda::Function", title(name)+"Function")
	role := fn.Properties["Role"].(map[string]any)["Fn::GetAtt"].([]any)
	return fnID, role[0].(string)
}

// statement is one IAM statement, its resources rendered as text.
type statement struct {
	Sid       string
	Actions   []string
	Resources []string
}

func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, strs(x)...)
		}
		return out
	}
	b, _ := json.Marshal(v)
	return []string{string(b)}
}

// policy returns the statements of the inline policies attached to a role.
func (m *tmpl) policy(roleID string) []statement {
	var out []statement
	for _, id := range m.ofType("AWS::IAM::Policy") {
		r := m.Resources[id]
		attached := false
		for _, ref := range r.Properties["Roles"].([]any) {
			if ref.(map[string]any)["Ref"] == roleID {
				attached = true
			}
		}
		if !attached {
			continue
		}
		doc := r.Properties["PolicyDocument"].(map[string]any)
		for _, st := range doc["Statement"].([]any) {
			st := st.(map[string]any)
			if st["Effect"] != "Allow" {
				m.t.Errorf("%s: unexpected effect %v", id, st["Effect"])
			}
			s := statement{Actions: strs(st["Action"]), Resources: strs(st["Resource"])}
			if sid, ok := st["Sid"].(string); ok {
				s.Sid = sid
			}
			out = append(out, s)
		}
	}
	return out
}

func actionsOf(sts []statement) []string {
	set := map[string]bool{}
	for _, s := range sts {
		for _, a := range s.Actions {
			set[a] = true
		}
	}
	var out []string
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func sorted(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func TestTableMirrorsTheStore(t *testing.T) {
	m := synth(t, CustomerProps{})
	_, table := m.one("AWS::DynamoDB::Table", "Table")
	want := dynamo.TableInput("vp-acme")
	p := table.Properties

	if p["BillingMode"] != "PAY_PER_REQUEST" {
		t.Errorf("BillingMode = %v, want PAY_PER_REQUEST", p["BillingMode"])
	}
	if !reflect.DeepEqual(p["PointInTimeRecoverySpecification"], map[string]any{"PointInTimeRecoveryEnabled": true}) {
		t.Errorf("PITR = %v, want enabled", p["PointInTimeRecoverySpecification"])
	}
	if p["DeletionProtectionEnabled"] != true || table.DeletionPolicy != "Retain" {
		t.Errorf("deletion protection = %v, policy %q; want true, Retain", p["DeletionProtectionEnabled"], table.DeletionPolicy)
	}
	if !reflect.DeepEqual(p["TimeToLiveSpecification"], map[string]any{"AttributeName": dynamo.AttrTTL, "Enabled": true}) {
		t.Errorf("TTL = %v, want attribute %q enabled", p["TimeToLiveSpecification"], dynamo.AttrTTL)
	}

	keys := func(ks []any) string {
		var parts []string
		for _, k := range ks {
			k := k.(map[string]any)
			parts = append(parts, fmt.Sprint(k["AttributeName"], ":", k["KeyType"]))
		}
		return strings.Join(parts, ",")
	}
	wantKeys := func(in []dynamoKey) string {
		var parts []string
		for _, k := range in {
			kt := "RANGE"
			if k.hash {
				kt = "HASH"
			}
			parts = append(parts, k.name+":"+kt)
		}
		return strings.Join(parts, ",")
	}
	if got, w := keys(p["KeySchema"].([]any)), wantKeys(keysOf(want.KeySchema)); got != w {
		t.Errorf("key schema = %s, want %s", got, w)
	}
	attrs := map[string]string{}
	for _, a := range p["AttributeDefinitions"].([]any) {
		a := a.(map[string]any)
		attrs[a["AttributeName"].(string)] = a["AttributeType"].(string)
	}
	wantAttrs := map[string]string{}
	for _, a := range want.AttributeDefinitions {
		wantAttrs[*a.AttributeName] = string(a.AttributeType)
	}
	if !reflect.DeepEqual(attrs, wantAttrs) {
		t.Errorf("attributes = %v, want %v", attrs, wantAttrs)
	}
	gsis := map[string]string{}
	for _, g := range p["GlobalSecondaryIndexes"].([]any) {
		g := g.(map[string]any)
		proj := g["Projection"].(map[string]any)["ProjectionType"]
		gsis[g["IndexName"].(string)] = keys(g["KeySchema"].([]any)) + " " + fmt.Sprint(proj)
	}
	wantGSIs := map[string]string{}
	for _, g := range want.GlobalSecondaryIndexes {
		wantGSIs[*g.IndexName] = wantKeys(keysOf(g.KeySchema)) + " " + string(g.Projection.ProjectionType)
	}
	if len(wantGSIs) != 4 || !reflect.DeepEqual(gsis, wantGSIs) {
		t.Errorf("GSIs = %v, want %v", gsis, wantGSIs)
	}
}

func TestDeletionProtectionCanBeTurnedOff(t *testing.T) {
	m := synth(t, CustomerProps{DeletionProtection: jsii.Bool(false)})
	_, table := m.one("AWS::DynamoDB::Table", "Table")
	if table.Properties["DeletionProtectionEnabled"] != false || table.DeletionPolicy != "Delete" {
		t.Errorf("deletion protection = %v, policy %q; want false, Delete", table.Properties["DeletionProtectionEnabled"], table.DeletionPolicy)
	}
	if p := table.Properties["PointInTimeRecoverySpecification"]; !reflect.DeepEqual(p, map[string]any{"PointInTimeRecoveryEnabled": true}) {
		t.Errorf("PITR = %v, want enabled regardless", p)
	}
}

// TestFunctionPolicies: each function's role names exactly the actions it
// uses, on its own resources only.
func TestFunctionPolicies(t *testing.T) {
	m := synth(t, CustomerProps{})
	tableID, _ := m.one("AWS::DynamoDB::Table", "Table")
	queueID, _ := m.one("AWS::SQS::Queue", "EmbedJobs")
	dlqID, _ := m.one("AWS::SQS::Queue", "EmbedDeadLetters")
	searchID, _ := m.one("AWS::OpenSearchService::Domain", "Search")
	masterID, _ := m.one("AWS::SecretsManager::Secret", "MasterToken")
	keysID, _ := m.one("AWS::SecretsManager::Secret", "SigningKeys")

	store := sorted(StoreItemActions, StoreQueryActions)
	secrets := []string{"secretsmanager:GetSecretValue"}
	send := []string{"sqs:SendMessage"}
	bedrock := []string{"bedrock:InvokeModel"}
	// Added by the SQS event source of the embedder.
	consume := []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}

	cases := []struct {
		fn      string
		actions []string
		// refs are the logical ids the policy may name; mustRef, those it must.
		refs []string
	}{
		{awsenv.FuncMCP, sorted(store, secrets, send, SearchHTTPActions, bedrock, PushActions), []string{tableID, queueID, searchID, masterID, keysID}},
		{awsenv.FuncOAuth, sorted(store, secrets), []string{tableID, masterID}},
		{awsenv.FuncEmbedder, sorted(store, send, consume, SearchHTTPActions, bedrock), []string{tableID, queueID, searchID}},
		// The GitHub credentials (TestGitHubCredentials) and, for the
		// scheduler, the deploy keys (TestErrorMonitor): no secret resource
		// is named, only the ARNs under the prefixes. Its
		// logs:FilterLogEvents comes with tenants' log groups only.
		{awsenv.FuncScheduler, sorted(store, SearchIndexerActions, secrets, PushActions), []string{tableID, searchID}},
		{awsenv.FuncWebhooks, sorted(store, SearchIndexerActions, secrets), []string{tableID, searchID}},
		// Pacerelle's $connect checks agent tokens and device credentials.
		{awsenv.FuncDoorbell, sorted(store, secrets), []string{tableID, masterID}},
	}
	for _, c := range cases {
		t.Run(c.fn, func(t *testing.T) {
			_, roleID := m.function(c.fn)
			sts := m.policy(roleID)
			if got := actionsOf(sts); !reflect.DeepEqual(got, c.actions) {
				t.Errorf("actions = %v\nwant      %v", got, c.actions)
			}
			all := map[string]bool{}
			for _, id := range m.ofType("AWS::DynamoDB::Table") {
				all[id] = true
			}
			for _, typ := range []string{"AWS::SQS::Queue", "AWS::OpenSearchService::Domain", "AWS::SecretsManager::Secret"} {
				for _, id := range m.ofType(typ) {
					all[id] = true
				}
			}
			for _, s := range sts {
				for _, r := range s.Resources {
					if r == "*" || strings.Contains(r, `"*"`) {
						t.Errorf("%v: wildcard resource %s", s.Actions, r)
					}
					for id := range all {
						if strings.Contains(r, `"`+id+`"`) && !slices.Contains(c.refs, id) {
							t.Errorf("%v names %s, which %s does not use", s.Actions, id, c.fn)
						}
					}
				}
			}
			// Store actions on the table (and its indexes for Query) only.
			for _, s := range sts {
				for _, a := range s.Actions {
					if strings.HasPrefix(a, "dynamodb:") {
						for _, r := range s.Resources {
							if !strings.Contains(r, tableID) {
								t.Errorf("%s on %s, want the table only", a, r)
							}
						}
					}
					if strings.HasPrefix(a, "sqs:") {
						for _, r := range s.Resources {
							if !strings.Contains(r, queueID) || strings.Contains(r, dlqID) {
								t.Errorf("%s on %s, want the jobs queue only", a, r)
							}
						}
					}
				}
			}
			// The role's only managed policy writes the function's logs.
			role := m.Resources[roleID]
			managed := fmt.Sprint(role.Properties["ManagedPolicyArns"])
			if strings.Count(managed, "arn:") != 1 || !strings.Contains(managed, "service-role/AWSLambdaBasicExecutionRole") {
				t.Errorf("managed policies = %s, want AWSLambdaBasicExecutionRole only", managed)
			}
		})
	}
}

func TestMasterTokenHashGiven(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	m := synth(t, CustomerProps{MasterTokenHash: hash})
	if ids := m.ofType("AWS::SecretsManager::Secret"); len(ids) != 2 || !strings.HasPrefix(ids[0], "GitHubDefaultCredentials") ||
		!strings.HasPrefix(ids[1], "SigningKeys") {
		t.Errorf("secrets = %v, want only the signing keys and the GitHub credentials", ids)
	}
	for _, fn := range Functions {
		fnID, roleID := m.function(fn)
		env := fmt.Sprint(m.Resources[fnID].Properties["Environment"])
		checks := fn == awsenv.FuncMCP || fn == awsenv.FuncOAuth || fn == awsenv.FuncDoorbell
		if strings.Contains(env, awsenv.EnvMasterHash+":"+hash) != checks || strings.Contains(env, awsenv.EnvMasterSecret) {
			t.Errorf("%s environment = %s", fn, env)
		}
		if fn == awsenv.FuncOAuth && slices.Contains(actionsOf(m.policy(roleID)), "secretsmanager:GetSecretValue") {
			t.Errorf("oauth may read a secret it does not need")
		}
	}
	if _, ok := m.Outputs["MasterTokenCommand"]; ok {
		t.Error("MasterTokenCommand output without a generated master token")
	}
}

func TestEmbeddingQueueAndDeadLetters(t *testing.T) {
	m := synth(t, CustomerProps{})
	dlqID, _ := m.one("AWS::SQS::Queue", "EmbedDeadLetters")
	_, q := m.one("AWS::SQS::Queue", "EmbedJobs")
	redrive := q.Properties["RedrivePolicy"].(map[string]any)
	if redrive["maxReceiveCount"] != float64(5) || !strings.Contains(fmt.Sprint(redrive["deadLetterTargetArn"]), dlqID) {
		t.Errorf("redrive = %v, want 5 receives then %s", redrive, dlqID)
	}
	if vt := q.Properties["VisibilityTimeout"].(float64); vt < 6*60 {
		t.Errorf("visibility timeout %v s, want at least six times the embedder's 60 s", vt)
	}
	// The alarm on the dead letters.
	found := 0
	for _, id := range m.ofType("AWS::CloudWatch::Alarm") {
		p := m.Resources[id].Properties
		if p["MetricName"] == "ApproximateNumberOfMessagesVisible" && p["Namespace"] == "AWS/SQS" &&
			strings.Contains(fmt.Sprint(p["Dimensions"]), dlqID) && p["Threshold"] == float64(1) &&
			p["ComparisonOperator"] == "GreaterThanOrEqualToThreshold" && len(p["AlarmActions"].([]any)) == 1 {
			found++
		}
	}
	if found != 1 {
		t.Errorf("found %d alarms on the dead-letter queue, want 1", found)
	}
	// The embedder consumes the queue and reports partial batch failures.
	embedderID, _ := m.function(awsenv.FuncEmbedder)
	m.assert.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
		"FunctionName":          map[string]any{"Ref": embedderID},
		"FunctionResponseTypes": []string{"ReportBatchItemFailures"},
		"BatchSize":             10,
	})
	if n := len(m.ofType("AWS::Lambda::EventSourceMapping")); n != 1 {
		t.Errorf("%d event source mappings, want 1", n)
	}
}

func TestFunctionsAlarmsAndSchedule(t *testing.T) {
	m := synth(t, CustomerProps{LogRetentionDays: 14})
	for _, fn := range Functions {
		fnID, _ := m.function(fn)
		p := m.Resources[fnID].Properties
		if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" || !reflect.DeepEqual(p["Architectures"], []any{"arm64"}) {
			t.Errorf("%s: runtime %v, handler %v, architectures %v", fn, p["Runtime"], p["Handler"], p["Architectures"])
		}
		if !strings.Contains(fmt.Sprint(p["Environment"]), awsenv.EnvTable) {
			t.Errorf("%s has no %s", fn, awsenv.EnvTable)
		}
		logID, _ := m.one("AWS::Logs::LogGroup", title(fn)+"Logs")
		if m.Resources[logID].Properties["RetentionInDays"] != float64(14) {
			t.Errorf("%s logs kept %v days, want 14", fn, m.Resources[logID].Properties["RetentionInDays"])
		}
		for _, metric := range []string{"Errors", "Throttles"} {
			n := 0
			for _, id := range m.ofType("AWS::CloudWatch::Alarm") {
				a := m.Resources[id].Properties
				if a["MetricName"] == metric && a["Namespace"] == "AWS/Lambda" && strings.Contains(fmt.Sprint(a["Dimensions"]), fnID) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s: %d %s alarms, want 1", fn, n, metric)
			}
		}
	}
	// One rule a cron job of the catalogue, on its function, its event
	// naming the job (the schedules themselves: TestScheduleRules).
	schedID, _ := m.function(awsenv.FuncScheduler)
	if rules := m.ofType("AWS::Events::Rule"); len(rules) != len(awsenv.Schedules()) {
		t.Errorf("%d rules %v, want one a scheduled job (%d)", len(rules), rules, len(awsenv.Schedules()))
	}
	_, rule := m.one("AWS::Events::Rule", "RecurringTasksSchedule")
	if rule.Properties["ScheduleExpression"] != "cron(* * * * ? *)" || !strings.Contains(fmt.Sprint(rule.Properties["Targets"]), schedID) {
		t.Errorf("rule = %v, want every minute on the scheduler", rule.Properties)
	}
}

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

func TestSearchTiers(t *testing.T) {
	t.Run("small", func(t *testing.T) {
		m := synth(t, CustomerProps{})
		_, d := m.one("AWS::OpenSearchService::Domain", "Search")
		p := d.Properties
		want := map[string]any{
			"EncryptionAtRestOptions":     map[string]any{"Enabled": true},
			"NodeToNodeEncryptionOptions": map[string]any{"Enabled": true},
		}
		for k, v := range want {
			if !reflect.DeepEqual(p[k], v) {
				t.Errorf("%s = %v, want %v", k, p[k], v)
			}
		}
		ep := p["DomainEndpointOptions"].(map[string]any)
		if ep["EnforceHTTPS"] != true {
			t.Errorf("DomainEndpointOptions = %v, want HTTPS enforced", ep)
		}
		cc := p["ClusterConfig"].(map[string]any)
		if cc["InstanceType"] != "t3.small.search" || cc["InstanceCount"] != float64(1) {
			t.Errorf("cluster = %v", cc)
		}
		if p["AccessPolicies"] != nil {
			t.Errorf("access policy %v: access must come from the functions' identity policies only", p["AccessPolicies"])
		}
		if d.DeletionPolicy != "Retain" {
			t.Errorf("domain deletion policy %q, want Retain", d.DeletionPolicy)
		}
		for _, fn := range Functions {
			fnID, _ := m.function(fn)
			env := fmt.Sprint(m.Resources[fnID].Properties["Environment"])
			uses := fn != awsenv.FuncOAuth && fn != awsenv.FuncDoorbell // the doorbell reads the table only
			if has := strings.Contains(env, awsenv.EnvSearchReplicas+":0") && strings.Contains(env, awsenv.EnvSearchEndpoint) &&
				strings.Contains(env, awsenv.EnvSearchService+":es"); has != uses {
				t.Errorf("%s environment on a one-node domain: %s; want the index: %v", fn, env, uses)
			}
			// The scheduler gets the index, not the memory service.
			memory := fn == awsenv.FuncMCP || fn == awsenv.FuncEmbedder
			if strings.Contains(env, awsenv.EnvQueueURL) != memory || strings.Contains(env, awsenv.EnvEmbedder+":") != memory {
				t.Errorf("%s environment = %s; want the queue and embedder: %v", fn, env, memory)
			}
		}
	})
	t.Run("medium", func(t *testing.T) {
		m := synth(t, CustomerProps{SearchTier: SearchDomainMedium})
		_, d := m.one("AWS::OpenSearchService::Domain", "Search")
		cc := d.Properties["ClusterConfig"].(map[string]any)
		if cc["InstanceType"] != "m6g.large.search" || cc["InstanceCount"] != float64(2) || cc["ZoneAwarenessEnabled"] != true {
			t.Errorf("cluster = %v", cc)
		}
	})
	t.Run("serverless", func(t *testing.T) {
		m := synth(t, CustomerProps{SearchTier: SearchServerless})
		if ids := m.ofType("AWS::OpenSearchService::Domain"); len(ids) != 0 {
			t.Errorf("domains %v, want none", ids)
		}
		collID, coll := m.one("AWS::OpenSearchServerless::Collection", "Search")
		if coll.Properties["Type"] != "VECTORSEARCH" {
			t.Errorf("collection = %v", coll.Properties)
		}
		var kinds []string
		for _, id := range m.ofType("AWS::OpenSearchServerless::SecurityPolicy") {
			kinds = append(kinds, m.Resources[id].Properties["Type"].(string))
		}
		sort.Strings(kinds)
		if !reflect.DeepEqual(kinds, []string{"encryption", "network"}) {
			t.Errorf("security policies %v", kinds)
		}
		_, access := m.one("AWS::OpenSearchServerless::AccessPolicy", "SearchAccess")
		policy := fmt.Sprint(access.Properties["Policy"])
		for _, fn := range Functions {
			_, roleID := m.function(fn)
			uses := fn != awsenv.FuncOAuth && fn != awsenv.FuncDoorbell // the doorbell reads the table only
			if strings.Contains(policy, roleID) != uses {
				t.Errorf("data access policy names %s: %v, want %v", fn, !uses, uses)
			}
			granted := slices.Contains(actionsOf(m.policy(roleID)), "aoss:APIAccessAll")
			if granted != uses {
				t.Errorf("%s aoss:APIAccessAll = %v, want %v", fn, granted, uses)
			}
			for _, s := range m.policy(roleID) {
				if slices.Contains(s.Actions, "aoss:APIAccessAll") && !strings.Contains(fmt.Sprint(s.Resources), collID) {
					t.Errorf("%s: aoss on %v, want the collection", fn, s.Resources)
				}
				if slices.ContainsFunc(s.Actions, func(a string) bool { return strings.HasPrefix(a, "es:") }) {
					t.Errorf("%s: %v on a serverless deployment", fn, s.Actions)
				}
			}
			fnID, _ := m.function(fn)
			env := fmt.Sprint(m.Resources[fnID].Properties["Environment"])
			if strings.Contains(env, awsenv.EnvSearchEndpoint) != uses || strings.Contains(env, awsenv.EnvSearchService+":aoss") != uses {
				t.Errorf("%s environment = %s, want the collection's endpoint: %v", fn, env, uses)
			}
		}
	})
}

func TestEmbeddingProviders(t *testing.T) {
	m := synth(t, CustomerProps{Embedding: awsenv.EmbedderOpenAI, OpenAIBaseURL: "https://api.openai.com/v1"})
	keyID, _ := m.one("AWS::SecretsManager::Secret", "OpenAIKey")
	for _, fn := range Functions {
		fnID, roleID := m.function(fn)
		uses := fn == awsenv.FuncMCP || fn == awsenv.FuncEmbedder
		if got := strings.Contains(fmt.Sprint(m.policy(roleID)), keyID); got != uses {
			t.Errorf("%s may read the OpenAI key: %v, want %v", fn, got, uses)
		}
		if slices.Contains(actionsOf(m.policy(roleID)), "bedrock:InvokeModel") {
			t.Errorf("%s may call Bedrock with embedding=openai", fn)
		}
		env := fmt.Sprint(m.Resources[fnID].Properties["Environment"])
		if strings.Contains(env, awsenv.EnvOpenAIBaseURL) != uses {
			t.Errorf("%s environment = %s", fn, env)
		}
	}
	m = synth(t, CustomerProps{Embedding: awsenv.EmbedderLocal})
	for _, fn := range Functions {
		_, roleID := m.function(fn)
		if a := actionsOf(m.policy(roleID)); slices.Contains(a, "bedrock:InvokeModel") {
			t.Errorf("%s may call Bedrock with embedding=local", fn)
		}
	}
}

func TestCustomDomain(t *testing.T) {
	m := synth(t, CustomerProps{Domain: "mcp.acme.example", CertificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/abc",
		ClerkIssuer: "https://clerk.acme.example"})
	oauthID, _ := m.function(awsenv.FuncOAuth)
	if env := fmt.Sprint(m.Resources[oauthID].Properties["Environment"]); !strings.Contains(env, awsenv.EnvClerkIssuer+":https://clerk.acme.example") ||
		!strings.Contains(env, awsenv.EnvPublicBaseURL+":https://mcp.acme.example") {
		t.Errorf("oauth environment = %s", env)
	}
	m.one("AWS::ApiGatewayV2::DomainName", "Domain")
	if got := fmt.Sprint(m.Outputs["McpUrl"]["Value"]); !strings.Contains(got, "https://mcp.acme.example") {
		t.Errorf("McpUrl = %s", got)
	}
	if _, ok := m.Outputs["ApiDomainTarget"]; !ok {
		t.Error("no ApiDomainTarget output")
	}
}

func TestValidate(t *testing.T) {
	bad := []CustomerProps{
		{Customer: "Acme"},
		{Customer: "a"},
		{Customer: "acme_corp"},
		{Customer: "acme", SearchTier: "elasticsearch"},
		{Customer: "acme", Embedding: "cohere"},
		{Customer: "acme", Embedding: awsenv.EmbedderOpenAI},
		{Customer: "acme", Domain: "mcp.acme.example"},
		{Customer: "acme", MasterTokenHash: "not-a-hash"},
		{Customer: "acme"}, // no LambdaDir
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "vantagepeers/acme/github"}, // no trailing '/'
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "vantagepeers/*/"},
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "/"},
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "a//"},
		{Customer: "acme", LambdaDir: "d", DeployKeySecretPrefix: "vantagepeers/acme/deploy-keys"}, // no trailing '/'
		{Customer: "acme", LambdaDir: "d", DeployKeySecretPrefix: "deploy-keys/*/"},
		{Customer: "acme", LambdaDir: "d", DeployKeySecretPrefix: "a//"},
		// Overlapping prefixes: each would reach the other's secrets.
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "acme/", DeployKeySecretPrefix: "acme/deploy-keys/"},
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "acme/github/", DeployKeySecretPrefix: "acme/"},
		{Customer: "acme", LambdaDir: "d", GitHubSecretPrefix: "acme/", DeployKeySecretPrefix: "acme/"},
		{Customer: "acme", LambdaDir: "d", MonitoredLogGroups: []string{"/ecs/api", "*"}},
		{Customer: "acme", LambdaDir: "d", MonitoredLogGroups: []string{"/ecs/a*b"}},
		{Customer: "acme", LambdaDir: "d", MonitoredLogGroups: []string{"/ecs/api:log-stream:x"}},
		{Customer: "acme", LambdaDir: "d", MonitoredLogGroups: []string{""}},
		{Customer: "acme", LambdaDir: "d", MonitoredLogGroups: []string{strings.Repeat("a", 513)}},
		{Customer: "acme", LambdaDir: "d", TenantLogGroups: map[string][]string{"acme": {"*"}}},
		{Customer: "acme", LambdaDir: "d", TenantLogGroups: map[string][]string{"acme": {"/ecs/?"}}},
		{Customer: "acme", LambdaDir: "d", TenantLogGroups: map[string][]string{"Acme": {"/ecs/api"}}},
		{Customer: "acme", LambdaDir: "d", TenantLogGroups: map[string][]string{"acme": {strings.Repeat("a", 512) + "*"}}},
		{Customer: "acme", LambdaDir: "d", TenantLogGroups: map[string][]string{"acme": {strings.Repeat("a", 500)}, "beta": {strings.Repeat("b", 500)},
			"gamma": {strings.Repeat("c", 500)}, "delta": {strings.Repeat("d", 500)}}}, // over the environment's room
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	ok := CustomerProps{Customer: "acme-2", LambdaDir: "dist/lambda"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if ok.SearchTier != SearchDomainSmall || ok.Embedding != awsenv.EmbedderBedrock || !*ok.DeletionProtection || ok.LogRetentionDays != 30 ||
		ok.GitHubSecretPrefix != "vantagepeers/VantagePeers-acme-2/github/" ||
		ok.DeployKeySecretPrefix != "vantagepeers/VantagePeers-acme-2/deploy-keys/" || ok.MonitoredLogGroups != nil || ok.TenantLogGroups != nil {
		t.Errorf("defaults = %+v", ok)
	}
	// monitoredLogGroups, the former tenant-less list, is the default
	// tenant's: no other tenant may name those groups.
	groups := CustomerProps{Customer: "acme", LambdaDir: "d", MonitoredLogGroups: []string{"/ecs/api", "app.prod#1", "/ecs/api", strings.Repeat("a", 512)},
		TenantLogGroups: map[string][]string{"default": {"/ecs/web"}, "acme": {"/aws/lambda/acme-*", "/aws/lambda/acme-*"}, "idle": nil}}
	if err := groups.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"default": {"/ecs/web", "/ecs/api", "app.prod#1", strings.Repeat("a", 512)}, "acme": {"/aws/lambda/acme-*"}}
	if !reflect.DeepEqual(groups.TenantLogGroups, want) || groups.MonitoredLogGroups != nil {
		t.Errorf("tenant log groups = %v, monitored %v; want %v (deduplicated, monitoredLogGroups the default tenant's)", groups.TenantLogGroups, groups.MonitoredLogGroups, want)
	}
}

// TestPropsFromContext: the context the Makefile passes (-c, strings)
// and cdk.json may hold (lists) reach the props.
func TestPropsFromContext(t *testing.T) {
	for _, groups := range []any{" /aws/lambda/app-prod, /ecs/api,", []any{"/aws/lambda/app-prod", "/ecs/api"}} {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{
			"customer": "acme", "lambdaDir": "d", "deployKeySecretPrefix": "acme/keys/", "monitoredLogGroups": groups,
		}})
		p, err := propsFromContext(app)
		if err != nil {
			t.Fatal(err)
		}
		if p.DeployKeySecretPrefix != "acme/keys/" || !reflect.DeepEqual(p.TenantLogGroups, map[string][]string{"default": {"/aws/lambda/app-prod", "/ecs/api"}}) {
			t.Errorf("%#v: prefix %q, log groups %q", groups, p.DeployKeySecretPrefix, p.TenantLogGroups)
		}
	}
	want := map[string][]string{"acme": {"/aws/lambda/acme-*"}, "beta": {"/ecs/beta-api"}}
	for _, groups := range []any{`{"acme":["/aws/lambda/acme-*"],"beta":["/ecs/beta-api"]}`,
		map[string]any{"acme": []any{"/aws/lambda/acme-*"}, "beta": []any{"/ecs/beta-api"}}} {
		p, err := propsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"customer": "acme", "lambdaDir": "d", "tenantLogGroups": groups}}))
		if err != nil || !reflect.DeepEqual(p.TenantLogGroups, want) {
			t.Errorf("tenantLogGroups %#v: %v, %v", groups, p, err)
		}
	}
	for _, bad := range []any{`["/ecs/api"]`, `{"acme":"/ecs/api"}`, `{"acme":["*"]}`, 42} {
		if _, err := propsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"customer": "acme", "lambdaDir": "d", "tenantLogGroups": bad}})); err == nil ||
			!strings.Contains(err.Error(), "tenantLogGroups") {
			t.Errorf("tenantLogGroups %#v: %v, want an error naming it", bad, err)
		}
	}
}

// TestGitHubCredentials: the functions that read GitHub credentials
// (awsenv.Function.GitHub: webhooks and scheduler, not mcp, whose comment
// jobs the scheduler's outbox job posts) get the secrets prefix and
// GetSecretValue on exactly arn:…:secret:<prefix>*, in one statement; no
// other function gets either. The default tenant's secret exists under the
// prefix, with a generated webhook secret and an empty token.
func TestGitHubCredentials(t *testing.T) {
	for _, c := range []struct{ name, prefix, want string }{
		{"default prefix", "", "vantagepeers/VantagePeers-acme/github/"},
		{"given prefix", "acme/gh/", "acme/gh/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := synth(t, CustomerProps{GitHubSecretPrefix: c.prefix})
			arn := `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":secretsmanager:eu-west-1:123456789012:secret:` + c.want + `*"]]}`
			var readers []string
			for _, f := range awsenv.Functions() {
				fnID, roleID := m.function(f.Name)
				env := m.Resources[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
				prefix, hasPrefix := env[awsenv.EnvGitHubSecretPrefix]
				var github []statement
				for _, s := range m.policy(roleID) {
					if s.Sid == "DeployKeys" { // TestErrorMonitor
						continue
					}
					for _, r := range s.Resources {
						if strings.Contains(r, ":secret:") || strings.Contains(r, "github") {
							github = append(github, s)
							break
						}
					}
				}
				if !f.GitHub {
					if hasPrefix || len(github) != 0 {
						t.Errorf("%s: %s = %v, statements %+v; want neither", f.Name, awsenv.EnvGitHubSecretPrefix, prefix, github)
					}
					continue
				}
				readers = append(readers, f.Name)
				if prefix != c.want {
					t.Errorf("%s: %s = %v, want %s", f.Name, awsenv.EnvGitHubSecretPrefix, prefix, c.want)
				}
				if len(github) != 1 || github[0].Sid != "GitHubCredentials" ||
					!reflect.DeepEqual(github[0].Actions, []string{"secretsmanager:GetSecretValue"}) ||
					!reflect.DeepEqual(github[0].Resources, []string{arn}) {
					t.Errorf("%s: statements %+v\nwant one GitHubCredentials: secretsmanager:GetSecretValue on %s", f.Name, github, arn)
				}
			}
			if !reflect.DeepEqual(readers, []string{awsenv.FuncScheduler, awsenv.FuncWebhooks}) {
				t.Errorf("functions reading GitHub credentials: %v, want the scheduler and webhooks", readers)
			}
			// Nothing may read every secret.
			for _, id := range m.ofType("AWS::IAM::Policy") {
				for _, st := range m.Resources[id].Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					st := st.(map[string]any)
					if slices.ContainsFunc(strs(st["Action"]), func(a string) bool { return strings.HasPrefix(a, "secretsmanager:") }) &&
						slices.Contains(strs(st["Resource"]), "*") {
						t.Errorf("%s: %v on *", id, st["Action"])
					}
				}
			}
			_, sec := m.one("AWS::SecretsManager::Secret", "GitHubDefaultCredentials")
			gen, _ := sec.Properties["GenerateSecretString"].(map[string]any)
			if sec.Properties["Name"] != c.want+awsenv.DefaultTenant || sec.Properties["SecretString"] != nil || gen == nil ||
				gen["SecretStringTemplate"] != `{"token":""}` || gen["GenerateStringKey"] != "webhookSecret" || sec.DeletionPolicy != "Retain" {
				t.Errorf("the default tenant's secret: %v (deletion %s)", sec.Properties, sec.DeletionPolicy)
			}
			for _, o := range []string{"GitHubWebhookUrl", "GitHubSecretPrefix", "GitHubCredentialsCommand", "GitHubTokenCommand"} {
				if _, ok := m.Outputs[o]; !ok {
					t.Errorf("no output %s", o)
				}
			}
			if v := fmt.Sprint(m.Outputs["GitHubTokenCommand"]["Value"]); !strings.Contains(v, "aws secretsmanager put-secret-value --secret-id") ||
				!strings.Contains(v, `"webhookSecret"`) || !strings.Contains(v, `"token"`) {
				t.Errorf("GitHubTokenCommand = %s", v)
			}
			if v := fmt.Sprint(m.Outputs["GitHubWebhookUrl"]["Value"]); !strings.Contains(v, "/webhooks/github") {
				t.Errorf("GitHubWebhookUrl = %s", v)
			}
		})
	}
}

// TestWebhooksRoutesAndGitHubSchedules: the webhooks function and its two
// routes, and the PR monitor's and the statistics' rules, are in the
// template — derived from the route table and the job catalogue
// (awsenv.Routes, awsenv.Schedules), named here so that dropping one from
// a table fails.
func TestWebhooksRoutesAndGitHubSchedules(t *testing.T) {
	m := synth(t, CustomerProps{})
	webhooksID, _ := m.function(awsenv.FuncWebhooks)
	schedulerID, _ := m.function(awsenv.FuncScheduler)
	for _, key := range []string{"POST /webhooks/github", "POST /webhooks/github/{tenant}"} {
		n := 0
		for _, id := range m.ofType("AWS::ApiGatewayV2::Route") {
			p := m.Resources[id].Properties
			if p["RouteKey"] != key {
				continue
			}
			n++
			integID := p["Target"].(map[string]any)["Fn::Join"].([]any)[1].([]any)[1].(map[string]any)["Ref"].(string)
			integ := m.Resources[integID].Properties
			if fn := integ["IntegrationUri"].(map[string]any)["Fn::GetAtt"].([]any)[0]; fn != webhooksID ||
				integ["IntegrationType"] != "AWS_PROXY" || integ["PayloadFormatVersion"] != "2.0" {
				t.Errorf("%s integrates %v", key, integ)
			}
			if a := p["AuthorizationType"]; a != nil && a != "NONE" {
				t.Errorf("%s: authorization %v; GitHub signs, it sends no token", key, a)
			}
		}
		if n != 1 {
			t.Errorf("%d routes %s, want 1", n, key)
		}
	}
	// The scheduler may invoke nothing but its rules; the webhooks
	// function is invoked by the API only.
	for _, c := range []struct{ rule, schedule, job string }{
		{"PrMonitorSchedule", "cron(0 * * * ? *)", "pr-monitor"},
		{"IssueStatsSchedule", "cron(0 6 * * ? *)", "issue-stats"},
	} {
		_, r := m.one("AWS::Events::Rule", c.rule)
		p := r.Properties
		targets := p["Targets"].([]any)
		if p["ScheduleExpression"] != c.schedule || len(targets) != 1 ||
			!strings.Contains(fmt.Sprint(targets[0].(map[string]any)["Arn"]), schedulerID) ||
			!strings.Contains(fmt.Sprint(targets[0].(map[string]any)["InputTransformer"]), `"detail":{"job":"`+c.job+`"}`) {
			t.Errorf("%s: %v, want %s on the scheduler naming %s", c.rule, p, c.schedule, c.job)
		}
	}
	for _, id := range m.ofType("AWS::Lambda::Permission") {
		p := m.Resources[id].Properties
		if strings.Contains(fmt.Sprint(p["FunctionName"]), webhooksID) && p["Principal"] != "apigateway.amazonaws.com" {
			t.Errorf("%s lets %v invoke the webhooks function", id, p["Principal"])
		}
	}
}

// fromContext is the props the CDK app reads from -c tenantLogGroups=groups.
func fromContext(t *testing.T, groups string) CustomerProps {
	t.Helper()
	p, err := propsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"customer": "acme", "lambdaDir": "d", "tenantLogGroups": groups}}))
	if err != nil {
		t.Fatal(err)
	}
	return *p
}

// TestErrorMonitor: the functions that run the error-monitor job
// (awsenv.Function.ErrorMonitor: the scheduler only) get the deploy-key
// prefix and GetSecretValue on exactly arn:…:secret:<prefix>*/VP_DEPLOY_KEY_*,
// in one statement, and — with tenants' log groups — logs:FilterLogEvents
// on exactly those groups' ARNs, in one statement; without any no role
// may FilterLogEvents at all. No other function gets any of these; the
// mapping of tenants to groups goes to them and to the mcp function.
func TestErrorMonitor(t *testing.T) {
	for _, c := range []struct {
		name   string
		props  CustomerProps
		prefix string
		logs   []string
	}{
		{"default prefix, no log groups", CustomerProps{}, "vantagepeers/VantagePeers-acme/deploy-keys/", nil},
		{"given prefix and log groups", CustomerProps{DeployKeySecretPrefix: "acme/convex/", MonitoredLogGroups: []string{"/aws/lambda/app-prod", "/ecs/api"}},
			"acme/convex/", []string{
				`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":logs:eu-west-1:123456789012:log-group:/aws/lambda/app-prod:*"]]}`,
				`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":logs:eu-west-1:123456789012:log-group:/ecs/api:*"]]}`,
			}},
		// The statement is the union of the tenants' groups of the context
		// (-c tenantLogGroups=…), each once.
		{"log groups of the tenants, from the context", fromContext(t, `{"acme":["/aws/lambda/acme-*","/ecs/api"],"beta":["/ecs/api"],"default":["/ecs/web"]}`),
			"vantagepeers/VantagePeers-acme/deploy-keys/", []string{
				`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":logs:eu-west-1:123456789012:log-group:/aws/lambda/acme-*:*"]]}`,
				`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":logs:eu-west-1:123456789012:log-group:/ecs/api:*"]]}`,
				`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":logs:eu-west-1:123456789012:log-group:/ecs/web:*"]]}`,
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := synth(t, c.props)
			// Each tenant's deploy keys, <prefix><tenant>/VP_DEPLOY_KEY_*:
			// no other secret under the prefix.
			keys := `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":secretsmanager:eu-west-1:123456789012:secret:` + c.prefix + `*/VP_DEPLOY_KEY_*"]]}`
			mapping := ""
			if c.props.TenantLogGroups != nil || c.props.MonitoredLogGroups != nil {
				p := c.props
				p.Customer, p.LambdaDir = "acme", "d"
				if err := p.Validate(); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(p.TenantLogGroups)
				mapping = string(b)
			}
			var monitors []string
			for _, f := range awsenv.Functions() {
				fnID, roleID := m.function(f.Name)
				env := m.Resources[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
				prefix, hasPrefix := env[awsenv.EnvDeployKeySecretPrefix]
				got, hasMapping := env[awsenv.EnvTenantLogGroups]
				switch wantMapping := mapping != "" && (f.ErrorMonitor || f.Name == awsenv.FuncMCP); {
				case wantMapping && got != mapping:
					t.Errorf("%s: %s = %v, want %s", f.Name, awsenv.EnvTenantLogGroups, got, mapping)
				case !wantMapping && hasMapping:
					t.Errorf("%s: %s = %v, want none", f.Name, awsenv.EnvTenantLogGroups, got)
				}
				var deployKeys, logs []statement
				for _, s := range m.policy(roleID) {
					if slices.ContainsFunc(s.Actions, func(a string) bool { return strings.HasPrefix(a, "logs:") }) {
						logs = append(logs, s)
					}
					if slices.ContainsFunc(s.Resources, func(r string) bool { return strings.Contains(r, ":secret:"+c.prefix) }) || s.Sid == "DeployKeys" {
						deployKeys = append(deployKeys, s)
					}
				}
				if !f.ErrorMonitor {
					if hasPrefix || len(deployKeys) != 0 || len(logs) != 0 {
						t.Errorf("%s: %s = %v, deploy-key statements %+v, logs statements %+v; want none", f.Name, awsenv.EnvDeployKeySecretPrefix, prefix, deployKeys, logs)
					}
					continue
				}
				monitors = append(monitors, f.Name)
				if prefix != c.prefix {
					t.Errorf("%s: %s = %v, want %s", f.Name, awsenv.EnvDeployKeySecretPrefix, prefix, c.prefix)
				}
				if len(deployKeys) != 1 || deployKeys[0].Sid != "DeployKeys" ||
					!reflect.DeepEqual(deployKeys[0].Actions, []string{"secretsmanager:GetSecretValue"}) ||
					!reflect.DeepEqual(deployKeys[0].Resources, []string{keys}) {
					t.Errorf("%s: statements %+v\nwant one DeployKeys: secretsmanager:GetSecretValue on %s", f.Name, deployKeys, keys)
				}
				switch {
				case c.logs == nil && len(logs) != 0:
					t.Errorf("%s: logs statements %+v without monitored log groups", f.Name, logs)
				case c.logs != nil && (len(logs) != 1 || logs[0].Sid != "MonitoredLogs" ||
					!reflect.DeepEqual(logs[0].Actions, []string{"logs:FilterLogEvents"}) || !reflect.DeepEqual(logs[0].Resources, c.logs)):
					t.Errorf("%s: logs statements %+v\nwant one MonitoredLogs: logs:FilterLogEvents on %v", f.Name, logs, c.logs)
				}
			}
			if !reflect.DeepEqual(monitors, []string{awsenv.FuncScheduler}) {
				t.Errorf("functions running the error monitor: %v, want the scheduler", monitors)
			}
			// No policy at all, attached to any role, may FilterLogEvents
			// without monitored log groups, or on anything but them.
			for _, id := range m.ofType("AWS::IAM::Policy") {
				for _, st := range m.Resources[id].Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					st := st.(map[string]any)
					if !slices.ContainsFunc(strs(st["Action"]), func(a string) bool { return strings.HasPrefix(a, "logs:") }) {
						continue
					}
					if got := strs(st["Resource"]); c.logs == nil || !reflect.DeepEqual(got, c.logs) {
						t.Errorf("%s: %v on %v", id, st["Action"], got)
					}
				}
			}
			if v := fmt.Sprint(m.Outputs["DeployKeySecretPrefix"]["Value"]); v != c.prefix {
				t.Errorf("DeployKeySecretPrefix = %s, want %s", v, c.prefix)
			}
			if v, want := fmt.Sprint(m.Outputs["DeployKeyCommand"]["Value"]),
				"aws secretsmanager create-secret --name "+c.prefix+"default/VP_DEPLOY_KEY_MYAPP --secret-string '<deploy key>'"; v != want {
				t.Errorf("DeployKeyCommand = %s\nwant               %s", v, want)
			}
		})
	}
}

// The tool-call alarms read the embedded metrics the mcp function logs
// (shared/emf): the fault rate (a math expression over Faults and Calls)
// and the p99 of Latency, both on the mcp function's dimension and on the
// alarm topic.
func TestToolCallAlarms(t *testing.T) {
	m := synth(t, CustomerProps{})
	mcpID, _ := m.function(awsenv.FuncMCP)
	_, rate := m.one("AWS::CloudWatch::Alarm", "ToolFaultRateAlarm")
	p := rate.Properties
	if p["Threshold"] != float64(FaultRatePercent) || p["ComparisonOperator"] != "GreaterThanThreshold" || len(p["AlarmActions"].([]any)) != 1 {
		t.Errorf("fault-rate alarm: %v", p)
	}
	metrics := fmt.Sprint(p["Metrics"])
	for _, want := range []string{"100 * faults / calls", "Faults", "Calls", "VantagePeers", "FunctionName", mcpID} {
		if !strings.Contains(metrics, want) {
			t.Errorf("fault-rate alarm metrics lack %q: %s", want, metrics)
		}
	}
	_, p99 := m.one("AWS::CloudWatch::Alarm", "ToolLatencyP99Alarm")
	p = p99.Properties
	if p["MetricName"] != "Latency" || p["Namespace"] != "VantagePeers" || p["ExtendedStatistic"] != "p99" ||
		p["Threshold"] != float64(LatencyP99Ms) || p["EvaluationPeriods"] != float64(3) || p["Period"] != float64(300) ||
		!strings.Contains(fmt.Sprint(p["Dimensions"]), mcpID) || len(p["AlarmActions"].([]any)) != 1 {
		t.Errorf("p99 latency alarm: %v", p)
	}
}

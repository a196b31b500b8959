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

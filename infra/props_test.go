package main

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

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
	for _, offline := range []string{awsenv.EmbedderLocal, awsenv.EmbedderConcept} {
		m = synth(t, CustomerProps{Embedding: offline})
		for _, fn := range Functions {
			fnID, roleID := m.function(fn)
			if a := actionsOf(m.policy(roleID)); slices.Contains(a, "bedrock:InvokeModel") {
				t.Errorf("%s may call Bedrock with embedding=%s", fn, offline)
			}
			if fn == awsenv.FuncEmbedder {
				if env := fmt.Sprint(m.Resources[fnID].Properties["Environment"]); !strings.Contains(env, awsenv.EnvEmbedder+":"+offline) {
					t.Errorf("embedding=%s: the embedder's environment = %s", offline, env)
				}
			}
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

// fromContext is the props the CDK app reads from -c tenantLogGroups=groups.
func fromContext(t *testing.T, groups string) CustomerProps {
	t.Helper()
	p, err := propsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"customer": "acme", "lambdaDir": "d", "tenantLogGroups": groups}}))
	if err != nil {
		t.Fatal(err)
	}
	return *p
}

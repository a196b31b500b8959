package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

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

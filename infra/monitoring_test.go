package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

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

package main

// Alarms on the MCP tool calls themselves, from the embedded-metric lines
// the mcp function logs (shared/emf): the share of calls the server failed
// and the 99th percentile of their latency. The functions' own Errors
// alarms only see a Lambda invocation fail, which a tool error never does.

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/emf"
)

// The thresholds of the tool-call alarms.
const (
	// FaultRatePercent: server-side failures (internal, unavailable) over
	// calls, per 5 minutes; a caller's mistakes (invalid arguments, not
	// found) are not the server's and do not count.
	FaultRatePercent = 5
	// LatencyP99Ms: the p99 of tool-call latency, three 5-minute periods
	// in a row (a cold start alone does not page anyone).
	LatencyP99Ms = 3000
)

func (s *CustomerStack) toolCallAlarms(p *CustomerProps, topic awssns.Topic) {
	fn := s.Functions[awsenv.FuncMCP]
	five := awscdk.Duration_Minutes(jsii.Number(5))
	metric := func(name, stat string) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(emf.Namespace), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{emf.DimFunction: fn.FunctionName()},
			Period:        five, Statistic: jsii.String(stat),
		})
	}
	faultRate := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		// IF guards the idle periods: no calls, no rate.
		Expression: jsii.String("IF(calls > 0, 100 * faults / calls, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"faults": metric(emf.MetricFaults, "Sum"), "calls": metric(emf.MetricCalls, "Sum"),
		},
		Period: five, Label: jsii.String("tool-call fault rate (%)"),
	})
	for _, a := range []struct {
		id, what  string
		m         awscloudwatch.IMetric
		threshold float64
		periods   float64
	}{
		{"ToolFaultRateAlarm", "more than 5% of MCP tool calls failed on the server's side (internal or unavailable) in 5 minutes", faultRate, FaultRatePercent, 1},
		{"ToolLatencyP99Alarm", "the p99 latency of MCP tool calls stayed above 3 s for 15 minutes", metric(emf.MetricLatency, "p99"), LatencyP99Ms, 3},
	} {
		alarm := awscloudwatch.NewAlarm(s.Stack, jsii.String(a.id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("VantagePeers " + p.Customer + ": " + a.what),
			Metric:             a.m,
			Threshold:          jsii.Number(a.threshold),
			EvaluationPeriods:  jsii.Number(a.periods),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		alarm.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
	}
}

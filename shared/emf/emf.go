// Package emf writes CloudWatch embedded metric format (EMF) fields into a
// structured log line: CloudWatch Logs extracts the metrics from the line
// itself, with no API call and no agent. One tool call is one line that is
// both its log record and its figures (count, errors, faults, latency).
//
// The format: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
package emf

import (
	"log/slog"
	"os"
	"time"
)

// Namespace is the CloudWatch namespace of VantagePeers' metrics.
const Namespace = "VantagePeers"

// The metric and dimension names, which the CDK stack's alarms use.
const (
	MetricCalls   = "Calls"
	MetricErrors  = "Errors" // any failed call, the caller's mistakes included
	MetricFaults  = "Faults" // failures that are the server's: internal, unavailable
	MetricLatency = "Latency"
	DimFunction   = "FunctionName"
	DimTool       = "Tool"
)

// Recorder adds the EMF fields of a tool call to a log record.
type Recorder struct {
	// Function is the dimension every metric carries: the Lambda function's
	// name, unique per stack, so that two customers' stacks in one account
	// keep their figures apart.
	Function string
}

// FromLambdaEnv is the Recorder of the running Lambda function
// (AWS_LAMBDA_FUNCTION_NAME), nil outside Lambda.
func FromLambdaEnv() *Recorder {
	fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	if fn == "" {
		return nil
	}
	return &Recorder{Function: fn}
}

type metric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []metric   `json:"Metrics"`
}

type metadata struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// The directives are the same for every call; only the values change.
// Per function, the four figures the alarms read; per function and tool,
// three (each is a custom metric, billed monthly once a tool is called:
// faults per tool are left to Logs Insights over the same lines).
var callDirective = []directive{{
	Namespace:  Namespace,
	Dimensions: [][]string{{DimFunction}},
	Metrics: []metric{
		{MetricCalls, "Count"}, {MetricErrors, "Count"}, {MetricFaults, "Count"}, {MetricLatency, "Milliseconds"},
	},
}, {
	Namespace:  Namespace,
	Dimensions: [][]string{{DimFunction, DimTool}},
	Metrics:    []metric{{MetricCalls, "Count"}, {MetricErrors, "Count"}, {MetricLatency, "Milliseconds"}},
}}

// ToolCall returns the EMF fields of one tool call, to log as top-level
// attributes of its line (a JSON handler with no group).
func (r *Recorder) ToolCall(at time.Time, tool string, failed, fault bool, d time.Duration) []any {
	return []any{
		slog.Any("_aws", metadata{Timestamp: at.UnixMilli(), CloudWatchMetrics: callDirective}),
		slog.String(DimFunction, r.Function), slog.String(DimTool, tool),
		slog.Int(MetricCalls, 1), slog.Int(MetricErrors, b2i(failed)), slog.Int(MetricFaults, b2i(fault)),
		slog.Float64(MetricLatency, float64(d.Microseconds())/1000),
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

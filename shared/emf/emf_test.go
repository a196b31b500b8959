package emf_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/emf"
)

// The exact EMF shape CloudWatch Logs extracts metrics from: _aws with a
// millisecond Timestamp and one directive (namespace, dimension sets,
// metric names and units), and every dimension and metric as a top-level
// member of the same JSON object.
func TestToolCallIsExactlyEMF(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	r := &emf.Recorder{Function: "VantagePeers-acme-Mcp-AbC123"}
	at := time.UnixMilli(1764600000123)
	for _, c := range []struct {
		failed, fault  bool
		errors, faults float64
	}{{false, false, 0, 0}, {true, false, 1, 0}, {true, true, 1, 1}} {
		buf.Reset()
		log.Info("tool call", append([]any{"tool", "send_message"}, r.ToolCall(at, "send_message", c.failed, c.fault, 12345*time.Microsecond)...)...)
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"Timestamp": float64(1764600000123),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  "VantagePeers",
				"Dimensions": []any{[]any{"FunctionName"}},
				"Metrics": []any{
					map[string]any{"Name": "Calls", "Unit": "Count"}, map[string]any{"Name": "Errors", "Unit": "Count"},
					map[string]any{"Name": "Faults", "Unit": "Count"}, map[string]any{"Name": "Latency", "Unit": "Milliseconds"},
				},
			}, map[string]any{
				"Namespace":  "VantagePeers",
				"Dimensions": []any{[]any{"FunctionName", "Tool"}},
				"Metrics": []any{
					map[string]any{"Name": "Calls", "Unit": "Count"}, map[string]any{"Name": "Errors", "Unit": "Count"},
					map[string]any{"Name": "Latency", "Unit": "Milliseconds"},
				},
			}},
		}
		if !reflect.DeepEqual(line["_aws"], want) {
			t.Fatalf("_aws = %#v\nwant %#v", line["_aws"], want)
		}
		for k, v := range map[string]any{"FunctionName": r.Function, "Tool": "send_message", "Calls": 1.0, "Errors": c.errors, "Faults": c.faults, "Latency": 12.345} {
			if line[k] != v {
				t.Errorf("%s = %v, want %v (line %s)", k, line[k], v, buf.String())
			}
		}
	}
}

func TestFromLambdaEnv(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	if emf.FromLambdaEnv() != nil {
		t.Fatal("a recorder outside Lambda")
	}
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
	if r := emf.FromLambdaEnv(); r == nil || r.Function != "fn" {
		t.Fatalf("recorder %+v", r)
	}
}

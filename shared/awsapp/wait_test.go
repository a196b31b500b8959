package awsapp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// A Lambda that waits is billed for the wait: the MCP function bounds
// wait_for_activity to 10 s unless VP_WAIT_MAX_MS says otherwise, and a
// bad value stops the load naming the variable and its range.
func TestWaitIsBoundedOnAWS(t *testing.T) {
	secrets := awsapp.StaticSecrets{"master": master, "keys": `{"cursor":"` + strings.Repeat("11", 32) + `"}`}
	for _, c := range []struct {
		env  string
		want time.Duration
	}{{"", 10 * time.Second}, {"3000", 3 * time.Second}, {"25000", 25 * time.Second}} {
		e := map[string]string{awsenv.EnvMasterSecret: "master", awsenv.EnvKeysSecret: "keys"}
		if c.env != "" {
			e[awsenv.EnvWaitMaxMs] = c.env
		}
		a, logs, err := load(t, awsenv.FuncMCP, e, secrets)
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.env, err, logs)
		}
		if a.Activity == nil {
			t.Fatal("the MCP function has no wait_for_activity")
		}
		if a.Activity.MaxWait() != c.want {
			t.Fatalf("%s=%q: the MCP function waits at most %v; want %v", awsenv.EnvWaitMaxMs, c.env, a.Activity.MaxWait(), c.want)
		}
	}
	for _, bad := range []string{"50", "25001", "ten", "-1"} {
		_, err := awsapp.ConfigFromEnv(env(map[string]string{awsenv.EnvTable: "t", awsenv.EnvWaitMaxMs: bad}))
		if err == nil || !strings.Contains(err.Error(), awsenv.EnvWaitMaxMs) || !strings.Contains(err.Error(), "100 to 25000") {
			t.Fatalf("%s=%q: %v; want an error naming it and its range", awsenv.EnvWaitMaxMs, bad, err)
		}
	}
}

package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestVerifyClaims(t *testing.T) {
	tasks := []string{"t1", "t2", "t3"}
	owners := map[string]string{"t1": "agent-01", "t2": "agent-02", "t3": "agent-01"}
	for _, tc := range []struct {
		name      string
		wins      map[string][]string
		assignees map[string]string
		want      string // "" = ok; else a substring of the error
	}{
		{"each once", map[string][]string{"t1": {"agent-01"}, "t2": {"agent-02"}, "t3": {"agent-01"}}, owners, ""},
		{"never claimed", map[string][]string{"t1": {"agent-01"}, "t2": {"agent-02"}}, owners, "task t3 was never claimed"},
		{"claimed twice", map[string][]string{"t1": {"agent-01", "agent-03"}, "t2": {"agent-02"}, "t3": {"agent-01"}}, owners, "task t1 was claimed 2 times"},
		{"stored assignee differs", map[string][]string{"t1": {"agent-01"}, "t2": {"agent-02"}, "t3": {"agent-01"}},
			map[string]string{"t1": "agent-01", "t2": "agent-05", "t3": "agent-01"}, `won by agent-02 but is assigned to "agent-05"`},
		{"unknown task", map[string][]string{"t1": {"agent-01"}, "t2": {"agent-02"}, "t3": {"agent-01"}, "t9": {"agent-04"}}, owners, "unknown task t9"},
		{"total counted", map[string][]string{"t1": {"agent-01"}, "t2": {"agent-02"}, "t3": {"agent-01"}, "t9": {"agent-04"}}, owners, "4 claims for 3 tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifyClaims(tasks, tc.wins, tc.assignees)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("verifyClaims = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("verifyClaims = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckoutFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.co.on {
		t.Fatalf("default: on=%v err=%v, want the checkout benchmark off", c.co.on, err)
	}
	c, err = parseFlags([]string{"-checkout"}, io.Discard)
	if err != nil || !c.co.on || c.co.agents != 32 || c.co.tasks != 1000 || !slices.Equal(c.co.backends, []string{"sqlite", "dynamodb"}) {
		t.Fatalf("-checkout: %+v %v", c.co, err)
	}
	c, err = parseFlags([]string{"-checkout", "-checkout-backends=sqlite", "-checkout-agents=4", "-checkout-tasks=10"}, io.Discard)
	if err != nil || c.co.agents != 4 || c.co.tasks != 10 || !slices.Equal(c.co.backends, []string{"sqlite"}) {
		t.Fatalf("overrides: %+v %v", c.co, err)
	}
	for _, args := range [][]string{{"-checkout", "-checkout-backends=postgres"}, {"-checkout", "-checkout-agents=0"}, {"-checkout", "-checkout-page=500"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if got := agentName(0); got != "agent-01" {
		t.Errorf("agentName(0) = %q", got)
	}
}

// TestCheckoutRunSQLite races a small run end to end on SQLite.
func TestCheckoutRunSQLite(t *testing.T) {
	ctx := t.Context()
	st, closeStore, err := openCheckoutStore(ctx, "sqlite", t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	row, err := checkoutRun(ctx, "sqlite", st, checkoutConfig{on: true, agents: 8, tasks: 60, page: 10}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if row.Claimed != 60 || row.P95 <= 0 || row.claimsPerSecond() <= 0 {
		t.Fatalf("row = %+v", row)
	}
}

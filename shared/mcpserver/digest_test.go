package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/digest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestImprovisationDigestTool(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	for _, title := range []string{"Merged PR #142", "Merged PR #143\nVP-Sources: msg_01", "plain"} {
		if res, text := call(t, cs, "create_task", map[string]any{"title": title, "assignedTo": "bob", "priority": "low"}); res.IsError {
			t.Fatal(text)
		}
	}
	res, text := call(t, cs, "improvisation_digest", map[string]any{"windowDays": 7})
	r := decodeAs[digest.Result](t, text)
	if res.IsError || r.Total != 1 || r.CountsByOrch["alice"] != 1 || r.CountsByCategory["task"] != 1 || len(r.CountsByCategory) != 1 ||
		len(r.Samples) != 1 || strings.Join(r.Samples[0].Tokens, ",") != "merged,#142" {
		t.Fatalf("digest: %s", text)
	}
	if res, text := call(t, cs, "improvisation_digest", map[string]any{"windowDays": 0}); !res.IsError || !strings.Contains(text, "windowDays") {
		t.Fatalf("windowDays 0 accepted: %s", text)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "improvisation_digest" {
			if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
				t.Fatalf("not read-only: %+v", tl.Annotations)
			}
			return
		}
	}
	t.Fatal("improvisation_digest is not listed")
}

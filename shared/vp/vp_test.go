package vp_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestIDsSortByTimeAndMintingOrder(t *testing.T) {
	now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	g := vp.NewIDs(clock)
	prev := g.New("msg")
	for i := 0; i < 10_000; i++ { // same millisecond: still increasing
		id := g.New("msg")
		if id <= prev {
			t.Fatalf("id %s not after %s", id, prev)
		}
		prev = id
	}
	if !strings.HasPrefix(prev, "msg_") || len(prev) != 4+26 {
		t.Fatalf("shape: %s", prev)
	}
	got, ok := vp.TimeOfID(prev)
	if !ok || !got.Equal(now) {
		t.Fatalf("TimeOfID = %v %v, want %v", got, ok, now)
	}
	now = now.Add(time.Millisecond)
	next := g.New("msg")
	if next <= prev || vp.IDFloor("msg", now) > next || vp.IDFloor("msg", now) <= prev {
		t.Fatalf("IDFloor does not separate milliseconds: prev %s floor %s next %s", prev, vp.IDFloor("msg", now), next)
	}
}

func TestPrincipal(t *testing.T) {
	p := vp.Principal{Tenant: "acme", Orchestrators: []string{"Alice", "bob"}, ReadPrefixes: []string{"global", "project/x/"}, WritePrefixes: []string{"project/x"}}
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"acts as alice (case-folded)", p.CanActAs("ALICE"), true},
		{"acts as bob with spaces", p.CanActAs(" bob "), true},
		{"not carol", p.CanActAs("carol"), false},
		{"not system", p.CanActAs("system"), false},
		{"not empty", p.CanActAs(""), false},
		{"NFC: composed equals decomposed", vp.NormalizeOrchestrator("jos\u00e9") == vp.NormalizeOrchestrator("jose\u0301"), true},
		{"reads global", p.CanRead("global"), true},
		{"reads project/x/notes", p.CanRead("project/x/notes"), true},
		{"not project/xy", p.CanRead("project/xy"), false},
		{"writes project/x", p.CanWrite("project/x"), true},
		{"not writes global", p.CanWrite("global"), false},
		{"wildcard acts as anyone", vp.Principal{Orchestrators: []string{"*"}}.CanActAs("zed"), true},
		{"wildcard not system", vp.Principal{Orchestrators: []string{"*"}}.CanActAs("system"), false},
		{"admin is system", vp.Principal{Admin: true}.CanActAs("system"), true},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v", c.name, c.got)
		}
	}
	if who, err := p.ActAs("op", "from", ""); err != nil || who != "alice" {
		t.Errorf("default identity: %q %v", who, err)
	}
	_, err := p.ActAs("send_message", "from", "carol")
	var e *vp.Error
	if !errors.As(err, &e) || e.Kind != vp.KindForbidden || e.Field != "from" || !strings.Contains(err.Error(), "carol") {
		t.Errorf("impersonation error: %v", err)
	}
	_, err = vp.Principal{Orchestrators: []string{"*"}}.ActAs("op", "from", "")
	if vp.KindOf(err) != vp.KindInvalid {
		t.Errorf("wildcard without a name: %v", err)
	}
}

func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		v    string
		max  int
		req  bool
		kind vp.Kind
	}{
		{"ok", 10, true, vp.KindOther},
		{"", 10, false, vp.KindOther},
		{"  ", 10, true, vp.KindInvalid},
		{"12345678901", 10, true, vp.KindTooLarge},
		{"a\xffb", 10, true, vp.KindInvalid},
		{"a\x00b", 10, true, vp.KindInvalid},
	} {
		err := vp.CheckText("op", "field", c.v, c.max, c.req)
		if vp.KindOf(err) != c.kind {
			t.Errorf("CheckText(%q): %v, want kind %s", c.v, err, c.kind)
		}
		if err != nil && !strings.Contains(err.Error(), "field") {
			t.Errorf("error %q does not name the field", err)
		}
	}
}

package vp_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type baseLimits struct{ Title, Tags vp.Limit }

type moreLimits struct {
	baseLimits
	Note    vp.Limit
	Episode *baseLimits
	Extra   vp.Limits
	Skipped int
}

// TestLimitsOf: a declaration is flattened in field order, through
// embedded structs, pointers, Limits and []any; other fields are skipped.
func TestLimitsOf(t *testing.T) {
	d := moreLimits{
		baseLimits: baseLimits{Title: vp.MaxBytes("title", 10), Tags: vp.MaxItems("tags", 3, 5)},
		Note:       vp.MaxBytes("note", 7),
		Episode:    &baseLimits{Title: vp.MaxBytes("episode.title", 4)},
		Extra:      vp.Limits{vp.Between("limit", 1, 200)},
		Skipped:    9,
	}
	got := vp.LimitsOf([]any{d, vp.MaxBytes("last", 1)})
	var fields []string
	for _, l := range got {
		fields = append(fields, l.Field)
	}
	if len(got) == 7 && (got[1] != d.Tags || got[5] != d.Extra[0]) {
		t.Errorf("LimitsOf changed a limit: %+v, %+v", got[1], got[5])
	}
	// Episode.Tags is declared but zero: kept, for the reader to refuse.
	if got, want := strings.Join(fields, ","), "title,tags,note,episode.title,,limit,last"; got != want {
		t.Errorf("LimitsOf: %s, want %s", got, want)
	}
	if got := vp.LimitsOf(nil); len(got) != 0 {
		t.Errorf("LimitsOf(nil) = %v", got)
	}
}

// TestLimitChecksNameFieldAndLimit: the checks a Limit runs refuse one
// over the bound with the field and the bound in the error, in the words
// of the Check functions they replace.
func TestLimitChecksNameFieldAndLimit(t *testing.T) {
	over := 1e7 + 1
	for _, c := range []struct {
		err  error
		want string
	}{
		{vp.MaxBytes("title", 3).Text("op", "abcd", true), "op: title: is 4 bytes; the limit is 3 bytes"},
		{vp.MaxItems("tags", 2, 5).Tags("op", []string{"a", "b", "c"}), "op: tags: has 3 tags; the limit is 2"},
		{vp.MaxItems("tags", 2, 5).Tags("op", []string{"abcdef"}), "op: tags: is 6 bytes; the limit is 5 bytes"},
		{vp.MaxItems("items", 1, 5).List("op", []string{"a", "b"}), "op: items: has 2 entries; the limit is 1"},
		{vp.MaxItems("ids", 1, 0).IDs("op", []string{"a", "b"}), "op: ids: has 2 ids; the limit is 1"},
		{vp.Between("estimatedMinutes", 0, vp.MaxMinutes).Minutes("op", &over), "op: estimatedMinutes: must be a number of minutes between 0 and 10000000, got 1.0000001e+07"},
		{vp.CheckMinutes("op", "actualMinutes", &over), "op: actualMinutes: must be a number of minutes between 0 and 10000000, got 1.0000001e+07"},
		{vp.MaxBytes("steps[].title", 2).As("steps[3].title").Text("op", "abc", true), "op: steps[3].title: is 3 bytes"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("got %v, want %q...", c.err, c.want)
		}
		if !vp.IsKind(c.err, vp.KindTooLarge) && !vp.IsKind(c.err, vp.KindInvalid) {
			t.Errorf("%v: kind %v", c.err, vp.KindOf(c.err))
		}
	}
	at := 1e7
	for _, err := range []error{
		vp.MaxBytes("title", 3).Text("op", "abc", true),
		vp.MaxItems("tags", 2, 5).Tags("op", []string{"a", "abcde"}),
		vp.Between("m", 0, vp.MaxMinutes).Minutes("op", &at),
	} {
		if err != nil {
			t.Errorf("at the limit: %v", err)
		}
	}
}

package clerk

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TestWindowKeyUnchanged pins the key written before the window moved out
// of shared/oauth: windows stored then must still be read.
func TestWindowKeyUnchanged(t *testing.T) {
	it, err := windows.Item("oauth", "", window{sub: "user_1", times: []int64{1}, expires: 77})
	if err != nil {
		t.Fatal(err)
	}
	if it.Key != (store.Key{PK: "CLERKRL#user_1", SK: "RL"}) || it.GSI != [4]store.Key{} || it.ExpiresAt != 77 {
		t.Errorf("clerk window: item %+v %+v ttl %d", it.Key, it.GSI, it.ExpiresAt)
	}
	it, err = windows.Item("oauth", "", window{sub: "u", times: []int64{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(it.Data); got != "[1,2]" {
		t.Errorf("clerk window stored as %s", got)
	}
}

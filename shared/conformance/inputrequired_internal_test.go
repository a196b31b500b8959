package conformance

import "testing"

// TestStateRefusesAnyChange: a requestState holds only as signed, by this
// key; the suite's tampering (a suffix) and a state of another key fail.
func TestStateRefusesAnyChange(t *testing.T) {
	st, other := state{key: []byte("k1")}, state{key: []byte("k2")}
	signed := st.sign("round=2;name=ada")
	if got, ok := st.open(signed); !ok || got != "round=2;name=ada" {
		t.Fatalf("open(sign(x)) = %q, %v; want the payload back", got, ok)
	}
	for name, v := range map[string]string{
		"suite's tampering": signed + "-TAMPERED",
		"another key":       other.sign("round=2;name=ada"),
		"payload swapped":   st.sign("round=1")[:len(st.sign("round=1"))-43] + signed[len(signed)-43:],
		"no MAC":            "cm91bmQ9MQ",
		"empty":             "",
	} {
		if got, ok := st.open(v); ok {
			t.Errorf("%s: open(%q) accepted it as %q", name, v, got)
		}
	}
}

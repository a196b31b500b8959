package app_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestLocalEmbedder(t *testing.T) {
	for name, want := range map[string]string{
		"":                      "local-concept-v1/1024", // the embedded server's default
		"local-concept-v1":      "local-concept-v1/1024",
		"local-concept-v1/1024": "local-concept-v1/1024",
		"local-hash-v1":         "local-hash-v1/384", // still there by name
		"local-hash-v1/256":     "local-hash-v1/256",
		"concept":               "local-concept-v1/1024", // VP_EMBEDDER's values on AWS mean the same
		"local":                 "local-hash-v1/384",
	} {
		e, err := app.LocalEmbedder(name)
		if err != nil || e.Name() != want {
			t.Errorf("LocalEmbedder(%q) = %v, %v; want %s", name, e, err, want)
		}
	}
	for name, says := range map[string]string{
		"bedrock":              "local-concept-v1, local-hash-v1",
		"local-hash-v2":        "not an offline embedder",
		"local-concept-v1/x":   "16 to 4096",
		"local-concept-v1/8":   "16 to 4096",
		"local-hash-v1/999999": "16 to 4096",
	} {
		_, err := app.LocalEmbedder(name)
		if vp.KindOf(err) != vp.KindInvalid || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "embedder") {
			t.Errorf("LocalEmbedder(%q): error %v, want an invalid-argument error on embedder saying %q", name, err, says)
		}
	}
}

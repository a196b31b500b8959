package awsapp

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	cases := []struct {
		name      string
		env       map[string]string
		wantGC    int
		wantLimit int64
	}{
		{"lambda defaults", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, 400, 1024 << 20 * 8 / 10},
		{"GOGC wins", map[string]string{"GOGC": "50", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512"}, 123, 512 << 20 * 8 / 10},
		{"GOMEMLIMIT wins", map[string]string{"GOMEMLIMIT": "100MiB", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512"}, 400, 1 << 40},
		{"not in Lambda", map[string]string{}, 400, 1 << 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			debug.SetGCPercent(123) // a value tuneGC never sets: "left alone" shows
			debug.SetMemoryLimit(1 << 40)
			tuneGC(func(k string) string { return c.env[k] })
			if got := debug.SetGCPercent(100); got != c.wantGC {
				t.Errorf("GC percent %d, want %d", got, c.wantGC)
			}
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
		})
	}
}

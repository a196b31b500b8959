package mcpserver_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// gzipBomb is the bundle of issue 20: 15 entries of 16 MiB − 1 of zeros,
// each under the per-file limit, about 240 MiB from about 320 KiB.
func gzipBomb(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	const size = 16<<20 - 1
	zero := make([]byte, 1<<20)
	for i := range 15 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("concepts/%02d.md", i), Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		for left := size; left > 0; left -= min(left, len(zero)) {
			_, _ = tw.Write(zero[:min(left, len(zero))])
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// heapSampler records the peak of the heap's object bytes (live and not
// yet swept: what the process holds) while it runs.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{}), peak: heapNow()}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := heapNow(); v > h.peak {
				h.peak = v
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak
}

// Issue 20: 8 concurrent validate_okf_bundle calls of the gzip bomb grew
// the server by 3.4 GiB. Each is now refused at the inline bundle's total
// (64 MiB), in the entry that crosses it, without holding what it
// inflates: the peak heap growth of all 8 stays far under 256 MiB.
func TestOKFValidateGzipBombPeakMemory(t *testing.T) {
	if raceDetector {
		t.Skip("-race: inflating 8×64 MiB under the race detector takes minutes, and its shadow memory would swamp the measurement; the non-race run measures it")
	}
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	bomb := gzipBomb(t)
	b64 := base64.StdEncoding.EncodeToString(bomb)
	t.Logf("bomb: %d bytes compressed, %d as base64, 15 × (16 MiB − 1) of zeros", len(bomb), len(b64))

	runtime.GC()
	base := heapNow()
	h := sampleHeap()
	start := time.Now()
	var wg sync.WaitGroup
	texts := make([]string, 8)
	errs := make([]bool, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "validate_okf_bundle", Arguments: map[string]any{"bundle": b64}})
			if err != nil {
				texts[i] = err.Error()
				return
			}
			errs[i] = res.IsError
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					texts[i] += tc.Text
				}
			}
		}()
	}
	wg.Wait()
	peak := h.Stop()
	growth := int64(peak) - int64(base)
	t.Logf("8 concurrent validations of the bomb: %v, peak heap growth %d MiB (base %d MiB)", time.Since(start).Round(time.Millisecond), growth>>20, base>>20)
	for i, text := range texts {
		if !errs[i] || !strings.Contains(text, "67108864") || !strings.Contains(text, "concepts/03.md") {
			t.Errorf("call %d: %s; want a refusal naming the inline total (67108864) and the entry that crossed it", i, text)
		}
	}
	if growth >= 256<<20 {
		t.Fatalf("peak heap growth %d MiB; the budget is 256 MiB", growth>>20)
	}
}

// heavyBundle is as large as an inline bundle may be and all of it held:
// a foreign bundle of four concepts of 16 MiB − 1 (front matter, then
// zeros), 64 MiB in all, which a validation must hold whole.
func heavyBundle(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	const size = 16<<20 - 1024
	head := []byte("---\ntype: note\n---\n")
	zero := make([]byte, size-len(head))
	for i := range 4 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("concepts/%02d.md", i), Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(head)
		_, _ = tw.Write(zero)
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// Bundles within the inline limits that must be held whole: 8 at once are
// admitted against the service's one memory budget (256 MiB by default),
// the others waiting or refused with rate_limited naming the limit; none
// fails otherwise, and the heap stays within the budget and its garbage.
func TestOKFValidateHeavyBundlesShareTheBudget(t *testing.T) {
	if raceDetector {
		t.Skip("-race: inflating 8×64 MiB under the race detector takes minutes, and its shadow memory would swamp the measurement; the non-race run measures it")
	}
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	b64 := base64.StdEncoding.EncodeToString(heavyBundle(t))
	runtime.GC()
	base := heapNow()
	h := sampleHeap()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	valid, limited := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, text := call(t, cs, "validate_okf_bundle", map[string]any{"bundle": b64})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !res.IsError && strings.Contains(text, `"valid":true`):
				valid++
			case res.IsError && strings.Contains(text, "rate_limited") && strings.Contains(text, "268435456"):
				limited++
			default:
				t.Errorf("call %d: %.300s", i, text)
			}
		}()
	}
	wg.Wait()
	peak := h.Stop()
	growth := int64(peak) - int64(base)
	t.Logf("8 concurrent validations of a 64 MiB foreign bundle: %v, %d valid, %d rate-limited, peak heap growth %d MiB", time.Since(start).Round(time.Millisecond), valid, limited, growth>>20)
	if valid == 0 {
		t.Fatal("no call got through")
	}
	// The budget bounds what calls hold (live); the heap may also hold the
	// garbage of calls that ended, up to as much again before the collector
	// runs (GOGC=100). Without the budget: about 1 GiB.
	if growth >= 512<<20 {
		t.Fatalf("peak heap growth %d MiB: over twice the 256 MiB budget", growth>>20)
	}
}

package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRequestToWait: from a person's send to the return of a
// wait_for_messages that was waiting for it, over loopback HTTP and the
// doorbell WebSocket (relay on SQLite, sealed both ways). Reports p50 and
// p99.
func BenchmarkRequestToWait(b *testing.B) {
	w := newWorld(b)
	ctx := context.Background()
	cursor := ""
	var lat, sends []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("bench-%06d", i)
		i++
		got := make(chan map[string]any, 1)
		go func() {
			args := map[string]any{"timeoutMs": 30000, "limit": 1}
			if cursor != "" {
				args["afterCursor"] = cursor
			}
			got <- w.ok(b, "wait_for_messages", args)
		}()
		start := time.Now()
		if _, err := w.person.Send(ctx, "bench", id, "ping"); err != nil {
			b.Fatal(err)
		}
		sends = append(sends, time.Since(start))
		m := <-got
		lat = append(lat, time.Since(start))
		msgs := messagesOf(m)
		if len(msgs) != 1 || msgs[0]["id"] != id {
			b.Fatalf("waited for %s, got %v", id, m)
		}
		cursor = m["cursor"].(string)
		b.StopTimer()
		w.ok(b, "mark_processed", map[string]any{"messageId": id})
		b.StartTimer()
	}
	slices.Sort(lat)
	slices.Sort(sends)
	pct := func(d []time.Duration, p float64) float64 {
		return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.Logf("n=%s request→wait p50=%.2fms p99=%.2fms; of which the send (seal + POST + relay commit) p50=%.2fms p99=%.2fms",
		strconv.Itoa(len(lat)), pct(lat, 0.5), pct(lat, 0.99), pct(sends, 0.5), pct(sends, 0.99))
}

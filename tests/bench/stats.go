package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest sample such that at least p% of the
// samples are less than or equal to it. It never interpolates, so the answer
// is always a latency that was actually observed. sorted must be in
// ascending order; an empty slice yields 0.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	// rank = ceil(p/100 * n), 1-based. Work in integer hundredths of a
	// percent so that p=95, n=20 gives exactly 19 and not 19.000000000000004.
	num := int64(p*100+0.5) * int64(n)
	rank := int((num + 9999) / 10000)
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// summary is the latency distribution of one measured series.
type summary struct {
	Transport string
	Stored    int
	Tool      string
	N         int
	Errors    int
	P50       time.Duration
	P95       time.Duration
	P99       time.Duration
	Mean      time.Duration
	Max       time.Duration
	// CPUPerCall is CPU time per measured call of whatever served it; zero
	// when unknown.
	CPUPerCall time.Duration
}

// summarize computes the distribution of a series (sorting its samples in
// place).
func summarize(transport string, stored int, tool string, ser series) summary {
	samples := ser.samples
	slices.Sort(samples)
	s := summary{Transport: transport, Stored: stored, Tool: tool, N: len(samples), Errors: ser.errs, CPUPerCall: ser.cpuPerCall}
	if len(samples) == 0 {
		return s
	}
	var total time.Duration
	for _, d := range samples {
		total += d
	}
	s.Mean = total / time.Duration(len(samples))
	s.P50 = percentile(samples, 50)
	s.P95 = percentile(samples, 95)
	s.P99 = percentile(samples, 99)
	s.Max = samples[len(samples)-1]
	return s
}

// ms renders a duration in milliseconds with microsecond resolution.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

// thousands renders n with comma separators: 100000 -> "100,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// writeTable prints rows as a markdown table.
func writeTable(w io.Writer, rows []summary) {
	fmt.Fprintln(w, "| transport | stored | tool | n | p50 | p95 | p99 | mean | max | cpu/call | errors |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		cpu := "n/a"
		if r.CPUPerCall > 0 {
			cpu = ms(r.CPUPerCall)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %d |\n",
			r.Transport, thousands(r.Stored), r.Tool, r.N, ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Mean), ms(r.Max), cpu, r.Errors)
	}
}

package reservation_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/reservation"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

// BenchmarkCheckAt10k measures check_paths on SQLite (embedded) with
// 10,000 active reservations in one project, by 50 holders: each an
// even package's subtree ("svcA/pkgB/**") or a file of an odd one. It reports the p99 of
// one check of a file path, of a package subtree, and of "**" (which must
// read every entry: the index cannot narrow it).
//
//	go test ./shared/reservation -run XXX -bench CheckAt10k -benchtime 2000x
func BenchmarkCheckAt10k(b *testing.B) {
	const n = 10_000
	st := teststores.All[0].Open(b, nil)
	svc := reservation.New(reservation.Options{Store: st})
	start := time.Now()
	for i := range n {
		g := fmt.Sprintf("svc%d/pkg%d/**", i/100, i%100)
		if i%2 == 1 {
			g = fmt.Sprintf("svc%d/pkg%d/file%d.go", i/100, i%100, i)
		}
		r, err := svc.Reserve(ctx(), as("t1", fmt.Sprintf("agent%d", i%50)),
			reservation.ReserveInput{Project: "mono", Paths: []string{g}, TTLMinutes: ptr(1440.0)})
		if err != nil || !r.Reserved {
			b.Fatalf("seeding %d (%s): %+v, %v", i, g, r, err)
		}
	}
	b.Logf("seeded %d reservations in %v (%.2f ms each, with their conflict checks)", n, time.Since(start), float64(time.Since(start).Microseconds())/1000/n)
	for _, c := range []struct {
		name string
		path func(r *rand.Rand) string
	}{
		{"file", func(r *rand.Rand) string {
			if i := r.IntN(n); i%2 == 1 {
				return fmt.Sprintf("svc%d/pkg%d/file%d.go", i/100, i%100, i)
			}
			return fmt.Sprintf("svc%d/pkg%d/new.go", r.IntN(100), 2*r.IntN(50))
		}},
		{"subtree", func(r *rand.Rand) string { return fmt.Sprintf("svc%d/pkg%d/**", r.IntN(100), r.IntN(100)) }},
		{"everything", func(*rand.Rand) string { return "**" }},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				p := c.path(r)
				t0 := time.Now()
				got, err := svc.Check(ctx(), as("t1", "checker"), reservation.CheckInput{Project: "mono", Paths: []string{p}})
				lat = append(lat, time.Since(t0))
				if err != nil || len(got.Conflicts) == 0 {
					b.Fatalf("%s: %+v, %v; want conflicts", p, got, err)
				}
			}
			slices.Sort(lat)
			p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(p(0.5), "p50-ms")
			b.ReportMetric(p(0.99), "p99-ms")
			b.Logf("check %s at %d reservations: p50 %.3f ms, p99 %.3f ms over %d checks", c.name, n, p(0.5), p(0.99), len(lat))
		})
	}
}

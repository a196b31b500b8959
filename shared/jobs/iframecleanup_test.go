package jobs_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestIframeCleanupJob(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	svc := iframe.New(iframe.Options{Store: st, Now: func() time.Time { return start }})
	p := vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}}
	for id, ttl := range map[string]time.Duration{"old": time.Minute, "older": time.Second, "live": time.Hour} {
		if _, err := svc.CreateIframeSession(ctx, p, iframe.CreateInput{SessionID: id, Origin: "https://a.example", ExpiresAt: start.Add(ttl).UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := jobs.IframeCleanup(svc, nil)(ctx, start.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"old": false, "older": false, "live": true} {
		// Recreating succeeds only when the row is gone.
		_, err := svc.CreateIframeSession(ctx, p, iframe.CreateInput{SessionID: id, Origin: "https://a.example", ExpiresAt: start.Add(2 * time.Hour).UnixMilli()})
		if kept := err != nil; kept != want {
			t.Errorf("%s: kept=%v, want %v (%v)", id, kept, want, err)
		}
	}
}

package iframe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

func as(tenant string, orchs ...string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: orchs, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
}

func wantKind(t *testing.T, err error, kind vp.Kind, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s on %q", kind, field)
	}
	if vp.KindOf(err) != kind {
		t.Fatalf("got %v (kind %s), want kind %s", err, vp.KindOf(err), kind)
	}
	if field != "" && !strings.Contains(err.Error(), field) {
		t.Fatalf("error %q does not name field %q", err, field)
	}
}

func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	_ = cancel // the test process ends first
	return c
}

package jobs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
)

func TestParseSchedule(t *testing.T) {
	for _, tc := range []struct {
		expr string
		ok   bool
	}{
		{"* * * * *", true},
		{"0 6 * * *", true},
		{"*/5 * * * *", true},
		{"0 9 * * 1-5", true},
		{"0 0 1 JAN *", true},
		{"0 6 * * MON", true},
		{"0 6 * * ?", true},
		{"", false},
		{"* * * *", false},
		{"0 * * * * *", false}, // 6 fields: seconds are not a thing here
		{"@daily", false},
		{"@every 1h", false},
		{"TZ=Europe/Paris 0 6 * * *", false},
		{"60 * * * *", false},
		{"0 24 * * *", false},
		{"0 0 * * 7", false},
	} {
		_, err := jobs.ParseSchedule(tc.expr)
		if (err == nil) != tc.ok {
			t.Errorf("ParseSchedule(%q): %v, want ok=%v", tc.expr, err, tc.ok)
		}
	}
}

func TestScheduleNextAndDueAreUTC(t *testing.T) {
	daily := jobs.MustParseSchedule("0 6 * * *")
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// 05:30 UTC, 06:30 in Paris: the next run is 06:00 UTC the same day.
	from := time.Date(2026, 3, 2, 6, 30, 0, 0, paris)
	if got, want := daily.Next(from), time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Next(%v) = %v, want %v in UTC", from, got, want)
	}
	for at, due := range map[string]bool{
		"2026-03-02T06:00:00Z": true, "2026-03-02T06:00:30Z": true, // the event's seconds do not matter
		"2026-03-02T06:01:00Z": false, "2026-03-02T05:59:59Z": false, "2026-03-02T07:00:00+01:00": true,
	} {
		tm, _ := time.Parse(time.RFC3339, at)
		if got := daily.Due(tm); got != due {
			t.Errorf("Due(%s) = %v, want %v", at, got, due)
		}
	}
	tenth := jobs.MustParseSchedule("*/10 * * * *")
	for m, due := range map[int]bool{0: true, 5: false, 10: true, 50: true, 59: false} {
		if got := tenth.Due(time.Date(2026, 3, 2, 10, m, 0, 0, time.UTC)); got != due {
			t.Errorf("*/10 at minute %d: due %v, want %v", m, got, due)
		}
	}
}

func TestEventBridge(t *testing.T) {
	for _, tc := range []struct{ cron, want string }{
		{"* * * * *", "cron(* * * * ? *)"},
		{"0 6 * * *", "cron(0 6 * * ? *)"},               // daily at 06:00 UTC
		{"0 * * * *", "cron(0 * * * ? *)"},               // hourly
		{"*/10 * * * *", "cron(0/10 * * * ? *)"},         // aligned on the clock, unlike rate(10 minutes)
		{"5/20 * * * *", "cron(5/20 * * * ? *)"},         // 5, 25, 45
		{"0,30 * * * *", "cron(0,30 * * * ? *)"},         // two values are a list, not a step
		{"15 2-4 * * *", "cron(15 2-4 * * ? *)"},         //
		{"0 9 * * 1-5", "cron(0 9 ? * 2-6 *)"},           // Monday-Friday: cron 1-5, EventBridge 2-6 (SUN=1)
		{"0 9 * * MON-FRI", "cron(0 9 ? * 2-6 *)"},       //
		{"0 0 * * 0", "cron(0 0 ? * 1 *)"},               // Sunday
		{"0 0 * * 6,0", "cron(0 0 ? * 1,7 *)"},           // the weekend
		{"0 0 * * 1,3,5", "cron(0 0 ? * 2/2 *)"},         // Monday, Wednesday, Friday
		{"0 0 1 * *", "cron(0 0 1 * ? *)"},               // the first of the month
		{"0 0 1,15 JAN,JUL *", "cron(0 0 1,15 1,7 ? *)"}, //
		{"0 12 * 6-8 *", "cron(0 12 * 6-8 ? *)"},         // summer
		{"0 6 ? * *", "cron(0 6 * * ? *)"},               // "?" reads as "*"
		{"*/15 */6 */2 * *", "cron(0/15 0/6 1/2 * ? *)"},
		{"1-59/2 * * * *", "cron(1/2 * * * ? *)"},
	} {
		got, err := jobs.MustParseSchedule(tc.cron).EventBridge()
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.cron, got, err, tc.want)
		}
	}
	// Cron fires when either restricted day field matches; EventBridge
	// has no way to say so.
	if got, err := jobs.MustParseSchedule("0 0 1 * MON").EventBridge(); err == nil || !strings.Contains(err.Error(), "day-of-month and day-of-week") {
		t.Errorf("both day fields: %q, %v; want an error naming them", got, err)
	}
}

package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a 5-field cron expression (minute hour day-of-month month
// day-of-week), evaluated in UTC. Descriptors (@daily, @every 1h) and
// TZ= prefixes are refused: a schedule must also be expressible as an
// EventBridge rule, which has neither, and every schedule here is UTC.
type Schedule struct {
	expr string
	spec *cron.SpecSchedule
}

var fiveFields = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseSchedule parses a 5-field cron expression.
func ParseSchedule(expr string) (Schedule, error) {
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return Schedule{}, fmt.Errorf("schedule %q: a time zone prefix is not allowed; schedules are UTC", expr)
	}
	s, err := fiveFields.Parse(expr)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule %q: want 5 cron fields (minute hour day-of-month month day-of-week, UTC): %w", expr, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok { // only descriptors give another type, and they are refused above
		return Schedule{}, fmt.Errorf("schedule %q: not a cron expression", expr)
	}
	spec.Location = time.UTC
	return Schedule{expr: expr, spec: spec}, nil
}

// MustParseSchedule is ParseSchedule for the catalogue's literals.
func MustParseSchedule(expr string) Schedule {
	s, err := ParseSchedule(expr)
	if err != nil {
		panic(err)
	}
	return s
}

func (s Schedule) String() string { return s.expr }

// IsZero reports a schedule that was never parsed (a worker's).
func (s Schedule) IsZero() bool { return s.spec == nil }

// Next is the first fire time strictly after t, in UTC (zero if none in
// the next five years).
func (s Schedule) Next(t time.Time) time.Time { return s.spec.Next(t.UTC()) }

// Due reports whether the minute of at is a fire time. EventBridge delivers
// a scheduled event with the minute it was scheduled for, seconds aside.
func (s Schedule) Due(at time.Time) bool {
	m := at.UTC().Truncate(time.Minute)
	return s.spec.Next(m.Add(-time.Second)).Equal(m)
}

// The bit that robfig/cron sets on a field written "*" (or "?").
const starBit = 1 << 63

// EventBridge returns the schedule as an EventBridge schedule expression,
// cron(minutes hours day-of-month month day-of-week year). EventBridge
// differs from 5-field cron in three ways handled here: a sixth field
// (year, always *), days of the week numbered 1-7 from Sunday (cron: 0-6),
// and one of day-of-month and day-of-week must be "?". Standard cron fires
// when either day field matches if both are restricted; EventBridge cannot
// say that, so such a schedule is an error. Each field is written from the
// set of values it matches, so that lists, ranges and steps convert alike.
func (s Schedule) EventBridge() (string, error) {
	if s.spec == nil {
		return "", fmt.Errorf("schedule: empty")
	}
	sp := s.spec
	domStar, dowStar := sp.Dom&starBit != 0, sp.Dow&starBit != 0
	var dom, dow string
	switch {
	case domStar && dowStar:
		dom, dow = "*", "?"
	case domStar:
		dom, dow = "?", field(sp.Dow, 0, 6, 1)
	case dowStar:
		dom, dow = field(sp.Dom, 1, 31, 0), "?"
	default:
		return "", fmt.Errorf("schedule %q: restricts both day-of-month and day-of-week (cron fires on either); EventBridge cannot express that — use one of them", s.expr)
	}
	return fmt.Sprintf("cron(%s %s %s %s %s *)", field(sp.Minute, 0, 59, 0), field(sp.Hour, 0, 23, 0), dom,
		field(sp.Month, 1, 12, 0), dow), nil
}

// field writes the values of bitset b within [lo, hi], each shifted by
// offset: "*" when all match, "start/step" for a progression that runs to
// hi, else a comma-separated list of values and ranges.
func field(b uint64, lo, hi, offset int) string {
	var vals []int
	for v := lo; v <= hi; v++ {
		if b&(1<<uint(v)) != 0 {
			vals = append(vals, v)
		}
	}
	if len(vals) == hi-lo+1 {
		return "*"
	}
	if len(vals) >= 3 {
		step := vals[1] - vals[0]
		progression := step > 1 && vals[len(vals)-1]+step > hi
		for i := 2; progression && i < len(vals); i++ {
			progression = vals[i]-vals[i-1] == step
		}
		if progression {
			return strconv.Itoa(vals[0]+offset) + "/" + strconv.Itoa(step)
		}
	}
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j+1 < len(vals) && vals[j+1] == vals[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, strconv.Itoa(vals[i]+offset)+"-"+strconv.Itoa(vals[j]+offset))
		case j > i:
			parts = append(parts, strconv.Itoa(vals[i]+offset), strconv.Itoa(vals[j]+offset))
		default:
			parts = append(parts, strconv.Itoa(vals[i]+offset))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

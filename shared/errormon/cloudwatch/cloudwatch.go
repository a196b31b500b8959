// Package cloudwatch reads a deployment's error events from CloudWatch
// Logs with FilterLogEvents (the aws-sdk-go-v2 paginator), as a
// source.Source.
//
// What it must survive, from the API's documentation: pages of at most
// 10,000 events or 1 MB that may be EMPTY while a nextToken is still
// present (only an absent token ends a query), events ingested late with
// timestamps older than what was already read, and a quota of 5 requests
// a second per account and region, answered with ThrottlingException. So
// a Read paces its requests, starts an overlap before its watermark and
// deduplicates by event id, keeps an unfinished query's token in the
// cursor, and reports throttling as vp.KindRateLimited. See state for
// the cursor.
package cloudwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"
	"golang.org/x/time/rate"

	"github.com/vantagepeers/vantagepeers/shared/errormon/internal/errtext"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const op = "errormon.cloudwatch"

// Defaults.
const (
	DefaultOverlap  = 2 * time.Minute
	DefaultMaxPages = 50
	// DefaultInterval paces requests under CloudWatch Logs' quota for
	// FilterLogEvents, 5 a second per account and region: 4 a second,
	// since requests leave at 200 ms intervals but do not arrive so (the
	// fake, counting any second, throttled the sixth), and other readers
	// (the console, a second deployment) share the quota.
	DefaultInterval = 250 * time.Millisecond
	DefaultMaxIDs   = 1000
	DefaultMax      = 1000
	// ThrottleRetryAfter is the wait a throttled Read asks for: CloudWatch
	// does not say, and its quota refills every second.
	ThrottleRetryAfter = time.Second
	// deadlineMargin is kept between a request's end and the Read's
	// deadline, so that the Read can still answer with what it read.
	deadlineMargin = 500 * time.Millisecond
	// pageLimit is the events asked per page: CloudWatch's maximum.
	pageLimit = 10000
)

// FilterLogEventsAPI is the client's FilterLogEvents method, as the
// paginator takes it (*cloudwatchlogs.Client implements it).
type FilterLogEventsAPI = cloudwatchlogs.FilterLogEventsAPIClient

// Options configure a Source.
type Options struct {
	Client FilterLogEventsAPI
	// Now is the clock: a scan reads up to now.
	Now func() time.Time
	// Overlap is how far before its watermark a scan starts, for late
	// ingestion (default DefaultOverlap).
	Overlap time.Duration
	// MaxPages bounds the requests of one Read (default DefaultMaxPages).
	MaxPages int
	// Interval is the least time between two requests of this Source
	// (default DefaultInterval); share one Source per account and region.
	Interval time.Duration
	// MaxIDs bounds the event ids the cursor keeps per log group (default
	// DefaultMaxIDs).
	MaxIDs int
}

// Source reads CloudWatch Logs. It is safe for concurrent use; its Reads
// share one pace.
type Source struct {
	client   FilterLogEventsAPI
	now      func() time.Time
	overlap  time.Duration
	maxPages int
	maxIDs   int
	limiter  *rate.Limiter
}

var _ source.Source = (*Source)(nil)

// New returns a Source.
func New(o Options) *Source {
	s := &Source{client: o.Client, now: o.Now, overlap: o.Overlap, maxPages: o.MaxPages, maxIDs: o.MaxIDs}
	if s.now == nil {
		s.now = time.Now
	}
	if s.overlap <= 0 {
		s.overlap = DefaultOverlap
	}
	if s.maxPages <= 0 {
		s.maxPages = DefaultMaxPages
	}
	if s.maxIDs <= 0 {
		s.maxIDs = DefaultMaxIDs
	}
	interval := o.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	s.limiter = rate.NewLimiter(rate.Every(interval), 1)
	return s
}

// read is one Read in progress.
type read struct {
	s       *Source
	t       source.Target
	max     int
	pages   int
	events  []source.Event
	moved   bool // the cursor moved: events returned, a token or a watermark advanced
	stopped bool // out of budget: max events, pages or time
}

// Read implements source.Source.
func (s *Source) Read(ctx context.Context, t source.Target, cursor string, since time.Time, max int) (source.Page, error) {
	if s.client == nil {
		return source.Page{}, vp.E(op, vp.KindInternal, "", "the source has no CloudWatch Logs client")
	}
	groups := logGroups(t.LogGroups)
	if len(groups) == 0 {
		return source.Page{}, vp.Errorf(op, vp.KindInvalid, "logGroups", "deployment %q names no log group", t.Name)
	}
	st, err := decodeCursor(cursor)
	if err != nil {
		return source.Page{}, err
	}
	if max <= 0 {
		max = DefaultMax
	}
	now := s.now()
	start := errtext.Since(since, now).UnixMilli()
	for g := range st.Groups {
		if !slices.Contains(groups, g) {
			delete(st.Groups, g) // no longer configured
		}
	}
	r := &read{s: s, t: t, max: max}
	first := 0
	if st.Next > 0 {
		first = st.Next % len(groups)
	}
	st.Next = first
	for i := range groups {
		idx := (first + i) % len(groups)
		g := groups[idx]
		gs := st.Groups[g]
		if gs == nil {
			// A group read for the first time starts at since: not
			// before (the floor), and not an overlap earlier.
			gs = &groupState{W: start, Floor: start, IDs: map[string]int64{}}
			st.Groups[g] = gs
		}
		if r.stopped {
			break
		}
		done, err := r.group(ctx, g, gs, now.UnixMilli())
		if err != nil {
			if r.moved && vp.Retryable(err) {
				// Keep what was read; the next Read starts with this
				// group and meets the failure again if it lasts.
				st.Next = idx
				r.stopped = true
				break
			}
			return source.Page{}, err
		}
		if !done {
			// Out of budget inside this group: the next Read starts with
			// the one after it, so that no group starves the others.
			st.Next = (idx + 1) % len(groups)
		}
	}
	more := r.stopped
	for _, gs := range st.Groups {
		more = more || gs.Scan != nil
	}
	slices.SortStableFunc(r.events, func(a, b source.Event) int { return a.Time.Compare(b.Time) })
	return source.Page{Events: r.events, Cursor: st.encode(), More: more, Newest: st.reached(groups)}, nil
}

// group goes on with g's scan, or starts one up to nowMs. done is false
// when the Read's budget ran out first.
func (r *read) group(ctx context.Context, g string, gs *groupState, nowMs int64) (done bool, err error) {
	if gs.Scan == nil {
		from := max(gs.W-r.s.overlap.Milliseconds(), gs.Floor)
		if from > nowMs {
			return true, nil // the clock is behind the watermark: nothing to read yet
		}
		gs.Scan = &scan{Start: from, End: nowMs}
	}
	in := &cloudwatchlogs.FilterLogEventsInput{
		StartTime: aws.Int64(gs.Scan.Start),
		EndTime:   aws.Int64(gs.Scan.End),
		Limit:     aws.Int32(pageLimit),
	}
	if strings.HasPrefix(g, "arn:") {
		in.LogGroupIdentifier = aws.String(g)
	} else {
		in.LogGroupName = aws.String(g)
	}
	if p := strings.TrimSpace(r.t.FilterPattern); p != "" {
		in.FilterPattern = aws.String(p)
	}
	if gs.Scan.Token != "" {
		in.NextToken = aws.String(gs.Scan.Token)
	}
	function := lambdaFunction(g)
	pager := cloudwatchlogs.NewFilterLogEventsPaginator(r.s.client, in)
	restarted := false
	for pager.HasMorePages() {
		if r.pages >= r.s.maxPages {
			r.stopped = true
			return false, nil
		}
		rctx, cancel, ok := r.s.pace(ctx)
		if !ok {
			r.stopped = true
			return false, nil
		}
		out, err := pager.NextPage(rctx, withoutThrottleRetries)
		cut := rctx.Err() != nil // before cancel, which sets it
		cancel()
		r.pages++
		if err != nil {
			if gs.Scan.Token != "" && !restarted && staleToken(err) {
				// An expired token: the scan starts over; the ids keep
				// what it returned from being returned again.
				restarted = true
				gs.Scan.Token = ""
				in.NextToken = nil
				pager = cloudwatchlogs.NewFilterLogEventsPaginator(r.s.client, in)
				continue
			}
			if ctx.Err() == nil && cut {
				// Our margin before the deadline cut the request.
				r.stopped = true
				return false, nil
			}
			return false, classify(err, g)
		}
		for _, ev := range out.Events {
			if !r.take(gs, ev, function) {
				// Full: the page is read again next time, from the token
				// that fetched it; the ids skip what this Read took.
				r.stopped = true
				return false, nil
			}
		}
		gs.Scan.Token = aws.ToString(out.NextToken)
		r.moved = true
	}
	gs.W = max(gs.W, gs.Scan.End)
	gs.Scan = nil
	gs.prune(r.s.overlap.Milliseconds())
	r.moved = true
	return true, nil
}

// take adds ev unless it was returned before or is not an error; false
// when the Read is full.
func (r *read) take(gs *groupState, ev types.FilteredLogEvent, function string) bool {
	id, ts := aws.ToString(ev.EventId), aws.ToInt64(ev.Timestamp)
	if id == "" {
		id = fmt.Sprintf("%d/%s/%d", ts, aws.ToString(ev.LogStreamName), aws.ToInt64(ev.IngestionTime))
	}
	key := idKey(id)
	if gs.seen(key, ts) {
		return true
	}
	msg := aws.ToString(ev.Message)
	p, ok := parseMessage(msg)
	if !ok {
		return true
	}
	if len(r.events) >= r.max {
		return false
	}
	if p.Function == "" {
		p.Function = function
	}
	r.events = append(r.events, source.Event{
		ID: id, Time: time.UnixMilli(ts).UTC(), Function: p.Function,
		Type: p.Type, Message: p.Message, Stack: p.Stack,
		Raw: errtext.Clip(msg, source.MaxRawBytes),
	})
	gs.remember(key, ts, r.s.maxIDs)
	r.moved = true
	return true
}

// pace waits for this Source's next request slot and returns the
// request's context, which ends a margin before ctx's deadline. ok is
// false when no request fits before the deadline.
func (s *Source) pace(ctx context.Context) (context.Context, context.CancelFunc, bool) {
	end, has := ctx.Deadline()
	if has {
		end = end.Add(-deadlineMargin)
		if time.Until(end) <= 0 {
			return nil, nil, false
		}
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if has {
		rctx, cancel = context.WithDeadline(ctx, end)
	}
	// rate.Limiter.Wait refuses at once a wait that would pass the deadline.
	if err := s.limiter.Wait(rctx); err != nil {
		cancel()
		return nil, nil, false
	}
	return rctx, cancel, true
}

// withoutThrottleRetries stops the SDK's retryer from retrying throttling
// on its own: its retries would not be paced, and a throttled Read should
// tell its caller (who backs off) rather than sleep. Other retryable
// failures keep the SDK's retries.
func withoutThrottleRetries(o *cloudwatchlogs.Options) {
	switch r := o.Retryer.(type) {
	case nil:
	case aws.RetryerV2:
		o.Retryer = noThrottleRetryV2{r}
	default:
		o.Retryer = noThrottleRetry{r}
	}
}

type noThrottleRetry struct{ aws.Retryer }

func (r noThrottleRetry) IsErrorRetryable(err error) bool {
	return !throttled(err) && r.Retryer.IsErrorRetryable(err)
}

type noThrottleRetryV2 struct{ aws.RetryerV2 }

func (r noThrottleRetryV2) IsErrorRetryable(err error) bool {
	return !throttled(err) && r.RetryerV2.IsErrorRetryable(err)
}

func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

func throttled(err error) bool {
	switch errorCode(err) {
	case "ThrottlingException", "Throttling", "ThrottledException", "TooManyRequestsException",
		"RequestLimitExceeded", "LimitExceededException", "RequestThrottled", "RequestThrottledException":
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == 429
}

// staleToken: CloudWatch refuses a nextToken that expired.
func staleToken(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "InvalidParameterException" &&
		strings.Contains(strings.ToLower(api.ErrorMessage()), "token")
}

// classify gives a FilterLogEvents failure its kind.
func classify(err error, g string) error {
	code := errorCode(err)
	wrapped := fmt.Errorf("log group %q: %w", g, err)
	switch {
	case throttled(err):
		return vp.RateLimited(op, ThrottleRetryAfter, wrapped)
	case code == "AccessDeniedException" || code == "UnrecognizedClientException" || code == "InvalidSignatureException" ||
		code == "ExpiredTokenException" || code == "IncompleteSignature" || code == "MissingAuthenticationTokenException" ||
		code == "InvalidClientTokenId" || code == "SignatureDoesNotMatch":
		return &vp.Error{Op: op, Kind: vp.KindUnauthorized, Field: "logGroups", Err: wrapped,
			Msg: "CloudWatch Logs refused the credentials: check that the role may logs:FilterLogEvents on this log group"}
	case code == "ResourceNotFoundException":
		return &vp.Error{Op: op, Kind: vp.KindInvalid, Field: "logGroups", Err: wrapped, Msg: "no such log group"}
	case code == "InvalidParameterException" || code == "ValidationException":
		return &vp.Error{Op: op, Kind: vp.KindInvalid, Field: "filterPattern", Err: wrapped, Msg: "CloudWatch Logs refused the query"}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500 && code != "" {
		return vp.Wrap(op, vp.KindInvalid, wrapped)
	}
	// 5xx, network failures, timeouts, credentials that could not be had.
	return vp.Unavailable(op, wrapped)
}

// logGroups trims and deduplicates the configured groups, in order.
func logGroups(in []string) []string {
	out := make([]string, 0, len(in))
	for _, g := range in {
		if g = strings.TrimSpace(g); g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

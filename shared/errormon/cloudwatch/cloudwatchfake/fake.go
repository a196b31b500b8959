// Package cloudwatchfake is a fake of CloudWatch Logs' FilterLogEvents on
// httptest, speaking the documented AWS JSON 1.1 protocol (POST /,
// Content-Type application/x-amz-json-1.1, X-Amz-Target
// Logs_20140328.FilterLogEvents, errors as {"__type", "message"}), so that
// the real aws-sdk-go-v2 client can be pointed at it with BaseEndpoint.
//
// It models what a reader of CloudWatch Logs must survive: events
// returned in timestamp order in pages of at most 10,000 events or 1 MB,
// pages that are EMPTY while a nextToken is still present (as CloudWatch
// answers while it searches streams), late ingestion (an event put now
// with an old timestamp), ThrottlingException answers (scripted, or above
// a request rate), and tokens that expire. It records every request. It is
// a fake, not CloudWatch: tests that use it say so in their names.
package cloudwatchfake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
)

// Limits of FilterLogEvents.
const (
	MaxPageEvents = 10000
	MaxPageBytes  = 1 << 20
	// eventOverhead is what CloudWatch counts per event on top of its
	// message when it sizes a batch.
	eventOverhead = 26
)

// Target is the X-Amz-Target of FilterLogEvents.
const Target = "Logs_20140328.FilterLogEvents"

// AccessKey is the access key id the client of Client signs with.
const AccessKey = "AKIDFAKECLOUDWATCH"

// Event is a log event to put.
type Event struct {
	Stream    string
	Timestamp time.Time
	Message   string
}

// Stored is an event as the fake holds it.
type Stored struct {
	Event
	ID        string
	Ingestion time.Time
	seq       int64
}

// Options configure the fake.
type Options struct {
	// PageSize is the most events in a page (default and cap
	// MaxPageEvents); a request's limit applies when smaller.
	PageSize int
	// EmptyPages is how many empty pages, each with a nextToken, come
	// before every page of events and before the end.
	EmptyPages int
	// RateLimit, when positive, throttles requests beyond that many in any
	// second (CloudWatch Logs allows 5 a second per account and region).
	RateLimit int
	// AccessKey is the access key id the fake accepts; "" accepts
	// AccessKey.
	AccessKey string
}

// Request is a FilterLogEvents request as the fake saw it.
type Request struct {
	At            time.Time
	Group         string
	StartTime     *int64
	EndTime       *int64
	FilterPattern string
	NextToken     string
	Limit         int
	// Status and Code are the answer: 200 and "", or the error's.
	Status int
	Code   string
	Events int
}

// Server is the fake. It is safe for concurrent use.
type Server struct {
	srv  *httptest.Server
	opts Options

	mu       sync.Mutex
	groups   map[string][]*Stored
	seq      int64
	gen      int // bumped by ExpireTokens
	fails    []failure
	accepted []time.Time
	reqs     []Request
}

type failure struct {
	group         string // "": any
	status        int
	code, message string
}

// New starts a fake; t's cleanup closes it.
func New(t testing.TB, o Options) *Server {
	if o.PageSize <= 0 || o.PageSize > MaxPageEvents {
		o.PageSize = MaxPageEvents
	}
	if o.AccessKey == "" {
		o.AccessKey = AccessKey
	}
	s := &Server{opts: o, groups: map[string][]*Stored{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the endpoint.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the fake.
func (s *Server) Close() { s.srv.Close() }

// Client is a real cloudwatchlogs client pointed at the fake, with static
// credentials and the SDK's standard retryer (3 attempts) without its
// backoff, so that tests stay fast; optFns adjust it.
//
// The retries matter: with keep-alive, a response of more than about
// 128 KB sometimes fails with "use of closed network connection" (the
// SDK closes the request body after Do returns, while net/http's write
// loop still reads it for trailing bytes, and then closes the
// connection). The SDK retries that error (net.ErrClosed) by default, as
// it does against CloudWatch itself; a client with RetryMaxAttempts 1
// sees it.
func (s *Server) Client(optFns ...func(*cloudwatchlogs.Options)) *cloudwatchlogs.Client {
	return cloudwatchlogs.New(cloudwatchlogs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, "fake-secret", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = noBackoff{}
		}),
	}, optFns...)
}

type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

// CreateLogGroup creates an empty log group.
func (s *Server) CreateLogGroup(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[name]; !ok {
		s.groups[name] = nil
	}
}

// Put ingests events now (whatever their timestamps: an old one is a late
// arrival), creating the group if needed, and returns their event ids.
func (s *Server) Put(group string, es ...Event) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	ids := make([]string, 0, len(es))
	for _, e := range es {
		s.seq++
		if e.Stream == "" {
			e.Stream = "2026/01/01/[$LATEST]0123456789abcdef"
		}
		// CloudWatch's ids are 56 decimal digits that sort with the events.
		id := fmt.Sprintf("%020d%036d", e.Timestamp.UnixMilli(), s.seq)
		s.groups[group] = append(s.groups[group], &Stored{Event: e, ID: id, Ingestion: now, seq: s.seq})
		ids = append(ids, id)
	}
	return ids
}

// Fail makes the next n requests fail with the given status and error
// code ("InternalServerException", ...).
func (s *Server) Fail(n, status int, code, message string) { s.FailGroup("", n, status, code, message) }

// FailGroup is Fail for the requests that read group only.
func (s *Server) FailGroup(group string, n, status int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, failure{group, status, code, message})
	}
}

// Throttle makes the next n requests fail as CloudWatch throttles: HTTP
// 400, ThrottlingException, "Rate exceeded".
func (s *Server) Throttle(n int) { s.ThrottleGroup("", n) }

// ThrottleGroup is Throttle for the requests that read group only.
func (s *Server) ThrottleGroup(group string, n int) {
	s.FailGroup(group, n, http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
}

// ExpireTokens invalidates every nextToken handed out so far.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// input is FilterLogEvents' request.
type input struct {
	LogGroupName        *string  `json:"logGroupName"`
	LogGroupIdentifier  *string  `json:"logGroupIdentifier"`
	LogStreamNames      []string `json:"logStreamNames"`
	LogStreamNamePrefix *string  `json:"logStreamNamePrefix"`
	StartTime           *int64   `json:"startTime"`
	EndTime             *int64   `json:"endTime"`
	FilterPattern       *string  `json:"filterPattern"`
	NextToken           *string  `json:"nextToken"`
	Limit               *int     `json:"limit"`
}

type outEvent struct {
	EventID       string `json:"eventId"`
	IngestionTime int64  `json:"ingestionTime"`
	LogStreamName string `json:"logStreamName"`
	Message       string `json:"message"`
	Timestamp     int64  `json:"timestamp"`
}

// token is the state a nextToken carries: which query (q), the events as
// of when it began (asOf, so that pages stay stable while events arrive),
// the offset reached and the empty pages already answered before it.
type token struct {
	Q    uint64 `json:"q"`
	AsOf int64  `json:"a"`
	Off  int    `json:"o"`
	E    int    `json:"e"`
	Gen  int    `json:"g"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	idx := len(s.reqs)
	s.reqs = append(s.reqs, Request{At: time.Now()})
	s.mu.Unlock()
	status, code := http.StatusOK, ""
	defer func() {
		s.mu.Lock()
		s.reqs[idx].Status, s.reqs[idx].Code = status, code
		s.mu.Unlock()
	}()
	fail := func(st int, c, msg string) {
		status, code = st, c
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("fake-%d", idx))
		w.WriteHeader(st)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": c, "message": msg})
	}

	if r.Method != http.MethodPost || r.URL.Path != "/" {
		fail(http.StatusNotFound, "UnknownOperationException", "POST / only")
		return
	}
	if got := r.Header.Get("X-Amz-Target"); got != Target {
		fail(http.StatusBadRequest, "UnknownOperationException", "the fake serves "+Target+", not "+got)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-amz-json-1.1") {
		fail(http.StatusBadRequest, "SerializationException", "Content-Type must be application/x-amz-json-1.1")
		return
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		fail(http.StatusBadRequest, "MissingAuthenticationTokenException", "Missing Authentication Token")
		return
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+s.opts.AccessKey+"/") {
		fail(http.StatusBadRequest, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var in input
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		fail(http.StatusBadRequest, "SerializationException", "the body is not a FilterLogEvents request")
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	group := groupOf(in)
	req := &s.reqs[idx]
	req.Group, req.StartTime, req.EndTime = group, in.StartTime, in.EndTime
	req.FilterPattern, req.NextToken = aws.ToString(in.FilterPattern), aws.ToString(in.NextToken)
	if in.Limit != nil {
		req.Limit = *in.Limit
	}
	if i := slices.IndexFunc(s.fails, func(f failure) bool { return f.group == "" || f.group == group }); i >= 0 {
		f := s.fails[i]
		s.fails = slices.Delete(s.fails, i, i+1)
		fail(f.status, f.code, f.message)
		return
	}
	if s.opts.RateLimit > 0 {
		cut := time.Now().Add(-time.Second)
		s.accepted = slices.DeleteFunc(s.accepted, func(t time.Time) bool { return t.Before(cut) })
		if len(s.accepted) >= s.opts.RateLimit {
			fail(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
			return
		}
		s.accepted = append(s.accepted, time.Now())
	}
	if (in.LogGroupName == nil) == (in.LogGroupIdentifier == nil) {
		fail(http.StatusBadRequest, "InvalidParameterException", "Exactly one of logGroupName and logGroupIdentifier must be given.")
		return
	}
	events, ok := s.groups[group]
	if !ok {
		fail(http.StatusBadRequest, "ResourceNotFoundException", "The specified log group does not exist.")
		return
	}
	limit := s.opts.PageSize
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxPageEvents {
			fail(http.StatusBadRequest, "InvalidParameterException", "limit must be between 1 and 10000")
			return
		}
		limit = min(limit, *in.Limit)
	}
	match, err := compile(aws.ToString(in.FilterPattern))
	if err != nil {
		fail(http.StatusBadRequest, "InvalidParameterException", err.Error())
		return
	}
	q := queryHash(group, in)
	tok := token{Q: q, AsOf: s.seq, Gen: s.gen}
	if t := aws.ToString(in.NextToken); t != "" {
		if tok, ok = s.parseToken(t, q); !ok {
			fail(http.StatusBadRequest, "InvalidParameterException", "The specified nextToken is invalid.")
			return
		}
	}

	var hits []*Stored
	for _, e := range events {
		ms := e.Timestamp.UnixMilli()
		if e.seq > tok.AsOf || (in.StartTime != nil && ms < *in.StartTime) || (in.EndTime != nil && ms > *in.EndTime) ||
			!streamMatches(in, e.Stream) || !match(e.Message) {
			continue
		}
		hits = append(hits, e)
	}
	slices.SortStableFunc(hits, func(a, b *Stored) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return int(a.seq - b.seq)
	})

	out := struct {
		Events    []outEvent `json:"events"`
		NextToken *string    `json:"nextToken,omitempty"`
	}{Events: []outEvent{}}
	next := tok
	if tok.E < s.opts.EmptyPages {
		next.E++
		out.NextToken = aws.String(s.encodeToken(next))
	} else {
		size, off := 0, tok.Off
		for off < len(hits) && len(out.Events) < limit {
			e := hits[off]
			n := len(e.Message) + eventOverhead
			if len(out.Events) > 0 && size+n > MaxPageBytes {
				break
			}
			size += n
			out.Events = append(out.Events, outEvent{EventID: e.ID, IngestionTime: e.Ingestion.UnixMilli(),
				LogStreamName: e.Stream, Message: e.Message, Timestamp: e.Timestamp.UnixMilli()})
			off++
		}
		next.Off, next.E = off, 0
		// More events, or (after a page of them) the trailing empty pages.
		if off < len(hits) || (s.opts.EmptyPages > 0 && len(out.Events) > 0) {
			out.NextToken = aws.String(s.encodeToken(next))
		}
	}
	req.Events = len(out.Events)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("fake-%d", idx))
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server) encodeToken(t token) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) parseToken(raw string, q uint64) (token, bool) {
	b, err := base64.RawURLEncoding.DecodeString(raw)
	var t token
	if err != nil || json.Unmarshal(b, &t) != nil || t.Q != q || t.Gen != s.gen {
		return token{}, false
	}
	return t, true
}

// queryHash ties a token to the query it continues: CloudWatch rejects a
// token sent with other parameters.
func queryHash(group string, in input) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%v|%v|%q|%q|%q", group, fmtPtr(in.StartTime), fmtPtr(in.EndTime),
		aws.ToString(in.FilterPattern), in.LogStreamNames, aws.ToString(in.LogStreamNamePrefix))
	return h.Sum64()
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// groupOf is the group a request names, by name or by identifier (a name
// or an ARN, "arn:aws:logs:<region>:<account>:log-group:<name>[:*]").
func groupOf(in input) string {
	if in.LogGroupName != nil {
		return *in.LogGroupName
	}
	id := aws.ToString(in.LogGroupIdentifier)
	if _, name, ok := strings.Cut(id, ":log-group:"); ok {
		return strings.TrimSuffix(name, ":*")
	}
	return id
}

func streamMatches(in input, stream string) bool {
	if len(in.LogStreamNames) > 0 && !slices.Contains(in.LogStreamNames, stream) {
		return false
	}
	return in.LogStreamNamePrefix == nil || strings.HasPrefix(stream, *in.LogStreamNamePrefix)
}

// compile supports CloudWatch's term patterns: terms that must all
// appear ("ERROR timeout"), quoted phrases ("\"Task timed out\""), terms
// of which one must appear ("?ERROR ?panic") and terms that must not
// ("ERROR -healthcheck"); case-sensitive, as CloudWatch's. JSON and
// space-delimited patterns are not modelled.
func compile(pattern string) (func(string) bool, error) {
	pattern = strings.TrimSpace(pattern)
	if strings.HasPrefix(pattern, "{") || strings.HasPrefix(pattern, "[") || strings.HasPrefix(pattern, "%") {
		return nil, fmt.Errorf("the fake supports term filter patterns only, not %q", pattern)
	}
	var all, anyOf, none []string
	for len(pattern) > 0 {
		var term string
		prefix := byte(0)
		if pattern[0] == '?' || pattern[0] == '-' {
			prefix, pattern = pattern[0], pattern[1:]
		}
		if strings.HasPrefix(pattern, `"`) {
			end := strings.Index(pattern[1:], `"`)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in the filter pattern")
			}
			term, pattern = pattern[1:end+1], pattern[end+2:]
		} else {
			term, pattern, _ = strings.Cut(pattern, " ")
		}
		pattern = strings.TrimLeft(pattern, " ")
		if term == "" {
			continue
		}
		switch prefix {
		case '?':
			anyOf = append(anyOf, term)
		case '-':
			none = append(none, term)
		default:
			all = append(all, term)
		}
	}
	return func(msg string) bool {
		for _, t := range all {
			if !strings.Contains(msg, t) {
				return false
			}
		}
		for _, t := range none {
			if strings.Contains(msg, t) {
				return false
			}
		}
		if len(anyOf) == 0 {
			return true
		}
		for _, t := range anyOf {
			if strings.Contains(msg, t) {
				return true
			}
		}
		return false
	}, nil
}

package errormon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/ghmd"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The errors of an hour past a deployment's cap are summarised in one
// issue per deployment and hour, in one comment of the bot's that lists
// them all and is edited in place as more come. The summary record keeps,
// under a lease that lets one job at a time change it, the issue, the
// comment's id and what the comment lists; each job adds its group and
// writes the whole comment again. A rerun after a crash finds its group
// listed and writes the same comment; a crash between GitHub's answer and
// the record's update is caught by the marker (the comment is found, not
// posted again).

const (
	// maxSummaryLines is how many errors the comment lists; the others
	// are counted in its "…and N more" line (up to maxSummaryMore ids
	// remembered, so that a rerun does not count twice).
	maxSummaryLines = 250
	maxSummaryMore  = 2000
	// maxSummaryTitle bounds an error's text in its line.
	maxSummaryTitle = 120
	// summaryWait is how long a job waits for another's lease on the
	// summary before it is rescheduled.
	summaryWait = 20 * time.Second
)

// summaryRecord is a deployment's summary of an hour.
type summaryRecord struct {
	ID          string        `json:"_id"` // summaryID
	Deployment  string        `json:"deployment"`
	Hour        int64         `json:"hour"` // ms
	IssueNumber int           `json:"issueNumber,omitempty"`
	IssueURL    string        `json:"issueUrl,omitempty"`
	CommentID   int64         `json:"commentId,omitempty"`
	BodyHash    string        `json:"bodyHash,omitempty"` // of the comment as last written
	Items       []summaryItem `json:"items,omitempty"`
	More        []string      `json:"more,omitempty"` // ids past maxSummaryLines
	LeaseOwner  string        `json:"leaseOwner,omitempty"`
	LeaseUntil  int64         `json:"leaseUntil,omitempty"`
	UpdatedAt   int64         `json:"updatedAt"`
}

// summaryItem is one listed error, as it was when it was listed.
type summaryItem struct {
	ID        string `json:"id"`
	Text      string `json:"text"` // "<type>: <message>", raw (rendered when written)
	Count     int64  `json:"count"`
	FirstSeen int64  `json:"firstSeen"`
}

var summaries = table.Declare(table.Schema[summaryRecord]{
	Entity: "error summary",
	Primary: table.Key{PK: "ERRSUMMARY#{id}", SK: "ERRSUMMARY", Pattern: "a deployment's summary of an hour's errors past the cap",
		Note: "id = hash(deployment):hour; lease, issue, comment id; expires after 30 days"},
	Fields:  func(r summaryRecord) table.Values { return table.Values{"id": r.ID} },
	Expires: func(r summaryRecord) int64 { return r.Hour/1000 + 30*86400 },
})

// nameKey is a deployment's name as a marker or key may carry it: a hash,
// since a name is whatever the tenant typed ("-->" included).
func nameKey(name string) string {
	h := sha256.Sum256([]byte(name))
	return hex.EncodeToString(h[:8])
}

func summaryID(deployment string, hourMS int64) string {
	return fmt.Sprintf("%s:%d", nameKey(deployment), hourMS)
}

// summarise adds g to its hour's summary and returns the summary issue.
func (s *Service) summarise(ctx context.Context, op string, j outbox.Job, g Group, d Deployment) (int, string, error) {
	hourMS := g.summaryHour()
	hour := time.UnixMilli(hourMS).UTC()
	id := summaryID(d.Name, hourMS)
	rec, ver, err := s.holdSummary(ctx, op, j, id, d.Name, hourMS)
	if err != nil {
		return 0, "", err
	}
	saved := rec
	defer func() {
		// A lease not released ends by itself; releasing it lets the
		// next job in at once. What this job did not write to GitHub is
		// not recorded.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		saved.LeaseOwner, saved.LeaseUntil = "", 0
		_, _ = s.putSummary(rctx, op, j.Tenant, saved, ver)
	}()
	if rec.IssueNumber == 0 {
		marker := fmt.Sprintf("<!-- vantagepeers:errsummary:%s:%d -->", nameKey(d.Name), hour.Unix())
		title := ghmd.Title(fmt.Sprintf("[Auto] More new errors in %s (%s UTC)", d.Name, hour.Format("2006-01-02 15:04")), maxTitleChars)
		body := fmt.Sprintf("More than %d new errors appeared in deployment %s within the hour from %s UTC; the comment below lists the others, and is updated as more come.\n\n%s",
			s.o.IssuesPerHour, ghmd.Inline(d.Name, maxNameChars), hour.Format("2006-01-02 15:04"), marker)
		n, url, _, err := s.o.GitHub.CreateIssueOnce(ctx, j.Tenant, d.GitHubRepo, title, body, marker, Labels, hour.Add(-time.Hour))
		if err != nil {
			return 0, "", githubErr(err)
		}
		rec.IssueNumber, rec.IssueURL = n, url
		if ver, err = s.putSummary(ctx, op, j.Tenant, rec, ver); err != nil {
			return 0, "", err
		}
		saved = rec
	}
	if !listed(rec, g.ID) {
		if len(rec.Items) < maxSummaryLines {
			rec.Items = append(rec.Items, summaryItem{ID: g.ID, Text: ghmd.Clip(titleText(g), maxSummaryTitle), Count: g.Count, FirstSeen: g.FirstSeen})
		} else if len(rec.More) < maxSummaryMore {
			rec.More = append(rec.More, g.ID)
		}
	}
	marker := fmt.Sprintf("<!-- vantagepeers:errsummary-list:%s:%d -->", nameKey(d.Name), hour.Unix())
	body := summaryComment(d, hour, rec, marker)
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	if rec.CommentID != 0 && rec.BodyHash == hash {
		return rec.IssueNumber, rec.IssueURL, nil
	}
	cid, err := s.o.GitHub.SetComment(ctx, j.Tenant, d.GitHubRepo, rec.IssueNumber, rec.CommentID, marker, body, hour.Add(-clockSkew))
	if err != nil {
		return 0, "", githubErr(err)
	}
	rec.CommentID, rec.BodyHash = cid, hash
	if ver, err = s.putSummary(ctx, op, j.Tenant, rec, ver); err != nil {
		return 0, "", err
	}
	saved = rec
	return rec.IssueNumber, rec.IssueURL, nil
}

func listed(rec summaryRecord, id string) bool {
	return slices.ContainsFunc(rec.Items, func(it summaryItem) bool { return it.ID == id }) || slices.Contains(rec.More, id)
}

// summaryComment lists the summary's errors, each error's text inert
// (ghmd), under maxBodyChars with the "…and N more" line.
func summaryComment(d Deployment, hour time.Time, rec summaryRecord, marker string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "New errors past the hourly cap in deployment %s, hour from %s UTC:\n\n",
		ghmd.Inline(d.Name, maxNameChars), hour.Format("2006-01-02 15:04"))
	if h := d.heldBackIn(hour.UnixMilli()); h.Groups > 0 {
		fmt.Fprintf(&b, "Held back by the cap in this hour, so far: %d errors, %d occurrences, not filed as their own issues.\n\n", h.Groups, h.Events)
	}
	chars := utf8.RuneCountInString(b.String())
	// Room for the "more" line and the marker.
	budget := maxBodyChars - utf8.RuneCountInString(marker) - 64
	more := len(rec.More)
	for k, it := range rec.Items {
		line := fmt.Sprintf("- `%s` %s (%d occurrences, first seen %s)\n", it.ID, ghmd.Inline(it.Text, maxSummaryTitle), it.Count,
			time.UnixMilli(it.FirstSeen).UTC().Format(time.RFC3339))
		n := utf8.RuneCountInString(line)
		if chars+n > budget {
			more += len(rec.Items) - k
			break
		}
		b.WriteString(line)
		chars += n
	}
	if more > 0 {
		atLeast := ""
		if len(rec.More) >= maxSummaryMore {
			atLeast = "at least "
		}
		fmt.Fprintf(&b, "\n…and %s%d more.\n", atLeast, more)
	}
	b.WriteString("\n" + marker)
	return b.String()
}

// holdSummary takes the lease on summary id for job j (creating the
// record), waiting up to summaryWait for another job's; it returns the
// record and its version.
//
// Waiting for a lease is not a conflict: the wait rereads inside one
// attempt (awaitSummary). A lost write is another job taking the lease (or
// creating the record) first, and the next attempt waits for that lease
// like any other. Jobs of one hour queue on its lease, so a job may lose
// to each of the many ahead of it: its attempts are bounded by time, not
// by count, summaryWait in all as the wait's, which Pause checks after
// each lost write.
func (s *Service) holdSummary(ctx context.Context, op string, j outbox.Job, id, deployment string, hourMS int64) (summaryRecord, int64, error) {
	key := summaries.KeyOf(j.Tenant, table.Values{"id": id})
	until := time.Now().Add(summaryWait)
	var rec summaryRecord
	var ver int64
	err := table.Conflicts{Op: op, Field: "summary", ID: id, Max: math.MaxInt,
		Pause: func(ctx context.Context, _ int) error {
			if ctx.Err() != nil {
				return vp.Unavailable(op, ctx.Err())
			}
			if time.Now().After(until) {
				return vp.RateLimited(op, 0, fmt.Errorf("other jobs kept taking the lease of summary %s for %v", id, summaryWait))
			}
			return nil
		},
	}.Retry(ctx, func() error {
		var it store.Item
		var cond store.Cond
		var err error
		if rec, it, cond, err = s.awaitSummary(ctx, op, j, key, id, deployment, hourMS, until); err != nil {
			return err
		}
		now := s.nowMS()
		lease := time.Minute
		if dl, ok := ctx.Deadline(); ok {
			lease = time.Until(dl) + time.Second
		}
		rec.LeaseOwner, rec.LeaseUntil, rec.UpdatedAt = j.ID, now+lease.Milliseconds(), now
		item, err := summaries.Item(op, j.Tenant, rec)
		if err != nil {
			return err
		}
		ver = it.Version + 1
		return records.Err(op, s.o.Store.Write(ctx, store.Put(item, cond)))
	})
	if err != nil && ctx.Err() != nil && !vp.IsKind(err, vp.KindUnavailable) {
		// The job's time ran out in a read or a write rather than in a
		// pause: the same answer, so that the job runs again.
		err = vp.Unavailable(op, ctx.Err())
	}
	if err != nil {
		return rec, 0, err
	}
	return rec, ver, nil
}

// awaitSummary reads summary id, waiting until summaryWait has passed
// (until) while another job holds its lease; it returns the record (a new
// one when missing), its item and the condition of writing it back.
func (s *Service) awaitSummary(ctx context.Context, op string, j outbox.Job, key store.Key, id, deployment string, hourMS int64, until time.Time) (summaryRecord, store.Item, store.Cond, error) {
	for {
		rec, it, err := summaries.Get(ctx, s.o.Store, op, "summary", id, key)
		cond := store.IfVersion(it.Version)
		switch {
		case vp.IsKind(err, vp.KindNotFound):
			rec, cond = summaryRecord{ID: id, Deployment: deployment, Hour: hourMS}, store.IfNotExists
		case err != nil:
			return rec, it, cond, err
		}
		now := s.nowMS()
		if rec.LeaseOwner == "" || rec.LeaseOwner == j.ID || rec.LeaseUntil <= now {
			return rec, it, cond, nil
		}
		if time.Now().After(until) {
			return rec, it, cond, vp.RateLimited(op, time.Duration(rec.LeaseUntil-now)*time.Millisecond, nil)
		}
		t := time.NewTimer(25 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return rec, it, cond, vp.Unavailable(op, ctx.Err())
		case <-t.C:
		}
	}
}

// putSummary writes rec over version ver (the lease's) and returns the new
// version; a lost lease is unavailable (the job runs again).
func (s *Service) putSummary(ctx context.Context, op, tenant string, rec summaryRecord, ver int64) (int64, error) {
	rec.UpdatedAt = s.nowMS()
	item, err := summaries.Item(op, tenant, rec)
	if err != nil {
		return ver, err
	}
	err = s.o.Store.Write(ctx, store.Put(item, store.IfVersion(ver)))
	if errors.Is(err, store.ErrConditionFailed) {
		return ver, vp.Unavailable(op, fmt.Errorf("the summary %s changed under this job's lease", rec.ID))
	}
	if err != nil {
		return ver, records.Err(op, err)
	}
	return ver + 1, nil
}

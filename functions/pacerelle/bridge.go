package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/localstate"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Connection states (get_status, wait_for_messages).
const (
	ConnConnecting   = "connecting"
	ConnConnected    = "connected"
	ConnReconnecting = "reconnecting"
	ConnDisconnected = "disconnected" // the relay refused our credentials; retried slowly
	ConnStopped      = "stopped"
)

// Backoff bounds: full jitter over an exponential ceiling capped at 30 s,
// reset after a connection that held for stableAfter.
const (
	backoffBase = 250 * time.Millisecond
	backoffCap  = 30 * time.Second
	stableAfter = 30 * time.Second
	pollEvery   = 20 * time.Second // a fetch even without a ring: the doorbell is best effort
	sendTimeout = 10 * time.Second
	// ReplayWindow is how long message ids are remembered; an envelope
	// sent longer ago is refused (seal.ErrTooOld). A request waits at most
	// that long in the relay for a bridge to fetch it.
	ReplayWindow = 30 * 24 * time.Hour
)

// Bridge is one agent's end of Pacerelle.
type Bridge struct {
	cfg    Config
	file   *localstate.File
	me     *seal.Identity
	client *relayclient.Client
	log    *slog.Logger
	now    func() time.Time
	ids    *vp.IDs

	mu      sync.Mutex
	st      State
	conn    string
	lastErr string
	changed chan struct{} // closed and replaced when requests arrive
	kick    chan struct{}
	refused int
}

// Open takes the agent's state (lock, decrypt; a fresh identity on first
// start).
func Open(cfg Config, log *slog.Logger) (*Bridge, error) {
	file, data, err := localstate.Open(cfg.StoreRoot, "pacerelle-agent:"+cfg.AgentID)
	if err != nil {
		return nil, err
	}
	b := &Bridge{cfg: cfg, file: file, log: log, now: time.Now, ids: vp.NewIDs(nil), conn: ConnConnecting,
		changed: make(chan struct{}), kick: make(chan struct{}, 1)}
	b.client = &relayclient.Client{BaseURL: cfg.BaseURL, WSURL: cfg.WSURL, Token: cfg.Token, Agent: cfg.AgentID, HTTP: &http.Client{Timeout: 30 * time.Second}}
	if data != nil {
		if err := json.Unmarshal(data, &b.st); err != nil {
			_ = file.Close()
			return nil, fmt.Errorf("%s decrypts but is not a bridge state: %w (left untouched)", file.Path(), err)
		}
		if b.me, err = seal.ParseIdentity(b.st.Identity); err != nil {
			_ = file.Close()
			return nil, fmt.Errorf("%s: the device identity is damaged: %w", file.Path(), err)
		}
	} else {
		if b.me, err = seal.NewIdentity(wire.AgentParty(cfg.AgentID), "bridge-"+b.ids.New("d")[2:14]); err != nil {
			_ = file.Close()
			return nil, err
		}
		b.st.Identity, _ = b.me.Bytes()
		// A new identity's list must be newer than any list of a previous
		// bridge of this agent the relay keeps (it keeps the newest), or
		// the person re-pairing would be shown the old key.
		b.st.ListVersion = uint64(b.now().UnixMilli())
		if err := b.saveLocked(); err != nil {
			_ = file.Close()
			return nil, err
		}
	}
	return b, nil
}

// Close releases the state.
func (b *Bridge) Close() error { return b.file.Close() }

func (b *Bridge) saveLocked() error {
	b.st.prune()
	b.st.Seen.Prune(b.now().Add(-ReplayWindow).UnixMilli())
	data, err := json.Marshal(&b.st)
	if err != nil {
		return err
	}
	return b.file.Save(data)
}

func (b *Bridge) setConn(s string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conn = s
	if err != nil {
		b.lastErr = err.Error()
	} else if s == ConnConnected {
		b.lastErr = ""
	}
}

// Run keeps the bridge connected until ctx ends: each session registers
// the device, syncs pairings, resends unconfirmed replies, fetches from the
// cursor and then follows the doorbell; a failed session is retried after
// a full-jitter exponential backoff capped at 30 s.
func (b *Bridge) Run(ctx context.Context) {
	defer b.setConn(ConnStopped, nil)
	attempt := 0
	for ctx.Err() == nil {
		start := time.Now()
		err := b.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > stableAfter {
			attempt = 0
		}
		attempt++
		var ae *relayclient.APIError
		state := ConnReconnecting
		if errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden) {
			state = ConnDisconnected
		}
		b.setConn(state, err)
		delay := backoff(attempt)
		b.log.Warn("pacerelle: relay session ended; retrying", "err", err, "in", delay.Round(time.Millisecond), "attempt", attempt)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// backoff is full jitter: a uniform delay up to min(cap, base·2^attempt).
func backoff(attempt int) time.Duration {
	ceil := backoffCap
	if attempt < 20 {
		ceil = min(backoffCap, backoffBase<<attempt)
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

func (b *Bridge) session(ctx context.Context) error {
	list := seal.SignList(b.me, b.st.ListVersion, []seal.Device{b.me.Device})
	if err := b.client.RegisterAgent(ctx, b.me.Device, list); err != nil {
		return err
	}
	if err := b.syncPairings(ctx); err != nil {
		return err
	}
	b.flush(ctx)
	if err := b.fetchAll(ctx); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bell := make(chan error, 1)
	go func() {
		bell <- b.client.Doorbell(sctx, func() { b.setConn(ConnConnected, nil) }, func(int64) {
			select {
			case b.kick <- struct{}{}:
			default:
			}
		})
	}()
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-bell:
			return fmt.Errorf("doorbell: %w", err)
		case <-b.kick:
			// A ring is a new message or a pairing started or confirmed
			// (the relay rings the agent for both).
			if err := b.syncPairings(ctx); err != nil {
				return err
			}
			if err := b.fetchAll(ctx); err != nil {
				return err
			}
		case <-poll.C:
			b.flush(ctx)
			if err := b.syncPairings(ctx); err != nil {
				return err
			}
			if err := b.fetchAll(ctx); err != nil {
				return err
			}
		}
	}
}

// fetchAll reads the inbox from the cursor until it is empty. Each page is
// opened, stored and saved before the cursor is acknowledged: a crash in
// between refetches the page, and the duplicates are dropped by message id.
func (b *Bridge) fetchAll(ctx context.Context) error {
	for {
		b.mu.Lock()
		cursor := b.st.RelayCursor
		b.mu.Unlock()
		page, err := b.client.Inbox(ctx, cursor, 50)
		if err != nil {
			return err
		}
		if len(page.Messages) == 0 {
			return nil
		}
		synced := false
		b.mu.Lock()
		added := 0
		for _, m := range page.Messages {
			op, err := b.open(m)
			if (errors.Is(err, seal.ErrUnknownSender) || errors.Is(err, seal.ErrStaleList)) && !synced {
				b.mu.Unlock()
				synced = true
				serr := b.syncPairings(ctx)
				b.mu.Lock()
				if serr != nil {
					b.mu.Unlock()
					return serr
				}
				op, err = b.open(m)
			}
			if err != nil {
				if !errors.Is(err, seal.ErrReplay) {
					b.refused++
					b.log.Warn("pacerelle: envelope refused", "seq", m.Seq, "id", m.ID, "from", m.From, "err", err)
				}
				continue
			}
			if b.intake(op) {
				added++
			}
		}
		b.st.RelayCursor = page.Cursor
		err = b.saveLocked()
		if added > 0 {
			close(b.changed)
			b.changed = make(chan struct{})
		}
		b.mu.Unlock()
		if err != nil {
			return err
		}
		if err := b.client.Ack(ctx, page.Cursor); err != nil {
			return err
		}
		if !page.HasMore {
			return nil
		}
	}
}

func (b *Bridge) open(m wire.Message) (*seal.Opened, error) {
	env, err := seal.Decode(m.Envelope)
	if err != nil {
		return nil, err
	}
	if env.MessageID != m.ID || env.Conversation != m.Conversation || env.FromParty != m.From {
		return nil, fmt.Errorf("the relay's routing disagrees with the signed header: %w", seal.ErrSignature)
	}
	return seal.Open(b.me, &b.st.Pins, &b.st.Seen, env, seal.OpenOptions{AllowPlaintext: b.cfg.NoE2EE, MaxAge: ReplayWindow, Now: b.now})
}

// intake stores an opened message as a request; it reports whether it
// added one.
func (b *Bridge) intake(op *seal.Opened) bool {
	var p wire.Payload
	if err := json.Unmarshal(op.Body, &p); err != nil || (p.Kind != wire.KindRequest && p.Kind != wire.KindWidgetResponse) {
		b.log.Warn("pacerelle: not a request", "id", op.MessageID, "kind", p.Kind)
		return false
	}
	if b.st.request(op.MessageID) != nil {
		return false
	}
	b.st.NextSeq++
	now := b.now().UnixMilli()
	b.st.Requests = append(b.st.Requests, Request{ID: op.MessageID, Seq: b.st.NextSeq, Kind: p.Kind, ConversationID: op.Conversation,
		From: op.FromParty, FromDevice: op.FromDevice, Text: p.Text, WidgetID: p.WidgetID, Value: p.Value, ReplyTo: p.ReplyTo,
		SentAt: op.SentAtMs, ReceivedAt: now})
	b.st.Current = &Current{ConversationID: op.Conversation, From: op.FromParty, LastMessageID: op.MessageID, At: now}
	return true
}

// send seals a reply once, persists it, then sends it. A transport
// failure leaves it uncertain, to be resent with the same id.
func (b *Bridge) send(ctx context.Context, r Reply, payload wire.Payload) (Reply, error) {
	b.mu.Lock()
	devices := b.st.Pins.Devices(r.To)
	if len(devices) == 0 {
		b.mu.Unlock()
		return r, vp.Errorf("send_message", vp.KindNotFound, "to", "%q is not a paired person: pair a device first", r.To)
	}
	suite := seal.SuiteHPKE
	if b.cfg.NoE2EE {
		suite = seal.SuitePlain
	}
	body, _ := json.Marshal(payload)
	r.CreatedAt = b.now().UnixMilli()
	env, err := seal.Seal(b.me, seal.Header{Suite: suite, To: []string{r.To}, Conversation: r.ConversationID, MessageID: r.ID,
		ListVersion: b.st.ListVersion, SentAtMs: r.CreatedAt}, devices, body)
	if err != nil {
		b.mu.Unlock()
		return r, vp.Wrap("send_message", vp.KindInternal, err)
	}
	r.Envelope, r.Status = env.Encode(), StatusPending
	b.st.Replies = append(b.st.Replies, r)
	err = b.saveLocked()
	b.mu.Unlock()
	if err != nil {
		return r, vp.Wrap("send_message", vp.KindInternal, err)
	}
	return b.deliver(ctx, r.ID)
}

// deliver sends a persisted reply and records the outcome.
func (b *Bridge) deliver(ctx context.Context, id string) (Reply, error) {
	b.mu.Lock()
	var r Reply
	for _, x := range b.st.Replies {
		if x.ID == id {
			r = x
		}
	}
	b.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	_, err := b.client.Send(sctx, wire.SendBody{ID: r.ID, Conversation: r.ConversationID, To: []string{r.To}, Envelope: r.Envelope})
	cancel()
	// A refusal the relay will repeat for these bytes drops the reply; an
	// expired credential or a rate limit does not (it is retried).
	var ae *relayclient.APIError
	refused := errors.As(err, &ae) && ae.Status < 500 && ae.Status != http.StatusUnauthorized &&
		ae.Status != http.StatusTooManyRequests && ae.Status != http.StatusRequestTimeout
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.st.Replies {
		x := &b.st.Replies[i]
		if x.ID != id {
			continue
		}
		x.Attempts++
		switch {
		case err == nil:
			x.Status, x.ConfirmedAt, x.LastError = StatusSent, b.now().UnixMilli(), ""
		case refused:
			// The relay answered: it will never take this envelope.
			b.st.Replies = append(b.st.Replies[:i], b.st.Replies[i+1:]...)
			_ = b.saveLocked()
			return r, vp.Errorf("send_message", vp.KindInvalid, ae.Field, "the relay refused the reply: %s", ae.ErrorBody.Error)
		default:
			x.Status, x.LastError = StatusUncertain, err.Error()
		}
		r = *x
		break
	}
	if serr := b.saveLocked(); serr != nil {
		return r, vp.Wrap("send_message", vp.KindInternal, serr)
	}
	return r, nil
}

// flush resends every reply not yet confirmed, with its original id and
// bytes.
func (b *Bridge) flush(ctx context.Context) {
	b.mu.Lock()
	var ids []string
	for _, r := range b.st.Replies {
		if r.Status != StatusSent {
			ids = append(ids, r.ID)
		}
	}
	b.mu.Unlock()
	for _, id := range ids {
		if _, err := b.deliver(ctx, id); err != nil {
			b.log.Warn("pacerelle: resend refused", "id", id, "err", err)
		}
	}
}

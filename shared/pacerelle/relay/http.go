package relay

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// maxRequestBytes bounds a request body: an envelope in base64 and its
// routing fields.
const maxRequestBytes = MaxEnvelopeBytes*4/3 + 16<<10

// Prefix is where the API is mounted (shared/httpapi/routes.go).
const Prefix = "/pacerelle/"

// CredentialPrefix starts every person-device credential.
const CredentialPrefix = "prd_"

// AgentDevice is the device id under which an agent's acknowledgements are
// kept: an agent has one device, its bridge.
const AgentDevice = "bridge"

type caller struct {
	tenant, party, device string
	principal             *vp.Principal // a VantagePeers token (agent, or person starting a pairing)
	pendingWith           string        // DeviceRec.PendingWith of a person device
}

// access is who may call a route.
type access int

const (
	// confirmedOnly: an agent, a person's token, or a person device whose
	// pairing is confirmed. A started pairing is not a paired device: its
	// envelopes would be dropped by the clients, but the relay would store
	// them (inbox spam, storage growth) and let it read the person's inbox.
	confirmedOnly access = iota
	agentOnly
	// pairingStep: also a person device whose pairing is not confirmed,
	// which takes the steps that confirm it.
	pairingStep
)

// Handler serves the API under Prefix.
func (r *Relay) Handler() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, a access, fn func(http.ResponseWriter, *http.Request, caller) error) {
		mux.Handle(pattern, r.authed(a, fn))
	}
	h("PUT /pacerelle/v1/agent/device", agentOnly, r.putAgentDevice)
	h("POST /pacerelle/v1/pairings", confirmedOnly, r.startPairing)
	h("POST /pacerelle/v1/pairings/answer", agentOnly, r.answerPairing)
	h("POST /pacerelle/v1/pairings/reveal", pairingStep, r.revealPairing)
	h("POST /pacerelle/v1/pairings/confirm", pairingStep, r.confirmPairing)
	h("POST /pacerelle/v1/devices", confirmedOnly, r.addDevice)
	h("GET /pacerelle/v1/pairings", pairingStep, r.listPairings)
	h("GET /pacerelle/v1/lists/{party}", confirmedOnly, r.getList)
	h("PUT /pacerelle/v1/lists", confirmedOnly, r.putList)
	h("POST /pacerelle/v1/messages", confirmedOnly, r.send)
	h("GET /pacerelle/v1/inbox", confirmedOnly, r.inbox)
	h("POST /pacerelle/v1/inbox/ack", confirmedOnly, r.postAck)
	h("GET /pacerelle/v1/conversations", confirmedOnly, r.listConversations)
	mux.Handle("GET "+doorbellPath, queryCredentials(r.authed(confirmedOnly, r.doorbell)))
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such pacerelle endpoint"})
	})
	return mux
}

// queryCredentials lets a browser, whose WebSocket cannot carry headers,
// pass its credential as ?access_token= (and an agent as ?agent=), as the
// WebSocket API's $connect accepts them (Connect).
func queryCredentials(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if tok := q.Get("access_token"); tok != "" && req.Header.Get("Authorization") == "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if a := q.Get("agent"); a != "" && req.Header.Get(wire.AgentHeader) == "" {
			req.Header.Set(wire.AgentHeader, a)
		}
		next.ServeHTTP(w, req)
	})
}

func (r *Relay) authed(a access, fn func(http.ResponseWriter, *http.Request, caller) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c, err := r.authenticate(req)
		if err == nil && a == agentOnly && c.device != AgentDevice {
			err = vp.E("pacerelle", vp.KindForbidden, wire.AgentHeader, "only an agent (a VantagePeers token with "+wire.AgentHeader+") may call this")
		}
		if err == nil && a != pairingStep && c.pendingWith != "" {
			err = r.refusePending(req.Context(), c)
		}
		if err == nil {
			req.Body = http.MaxBytesReader(w, req.Body, maxRequestBytes)
			err = fn(w, req, c)
		}
		if err != nil {
			r.writeErr(w, req, err)
		}
	})
}

func (r *Relay) authenticate(req *http.Request) (caller, error) {
	const op = "pacerelle.auth"
	secret, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok && req.URL.Path == doorbellPath {
		secret, ok = subprotocolBearer(req.Header)
	}
	secret = strings.TrimSpace(secret)
	if !ok || secret == "" {
		return caller{}, vp.E(op, vp.KindUnauthorized, "Authorization", "a bearer token is required: an agent token or a device credential")
	}
	if rest, ok := strings.CutPrefix(secret, CredentialPrefix); ok {
		return r.deviceCaller(req.Context(), rest)
	}
	p, err := r.tokens.Resolve(req.Context(), secret)
	if err != nil {
		return caller{}, vp.E(op, vp.KindUnauthorized, "Authorization", "the token is not valid")
	}
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return caller{}, err
	}
	agent := req.Header.Get(wire.AgentHeader)
	if agent == "" {
		return caller{tenant: tenant, principal: &p}, nil
	}
	if err := vp.CheckName(op, wire.AgentHeader, agent, true); err != nil {
		return caller{}, err
	}
	if err := p.MayActAs(op, wire.AgentHeader, agent); err != nil {
		return caller{}, err
	}
	return caller{tenant: tenant, party: wire.AgentParty(agent), device: AgentDevice, principal: &p}, nil
}

// A device credential is prd_<base64url(tenant NUL party NUL device)>.<secret>;
// only the SHA-256 of the whole credential is stored, and compared in
// constant time.
func (r *Relay) deviceCaller(ctx context.Context, rest string) (caller, error) {
	bad := vp.E("pacerelle.auth", vp.KindUnauthorized, "Authorization", "the device credential is not valid")
	loc, _, ok := strings.Cut(rest, ".")
	raw, err := base64.RawURLEncoding.DecodeString(loc)
	parts := strings.Split(string(raw), "\x00")
	if !ok || err != nil || len(parts) != 3 || !vp.ValidTenant(parts[0]) {
		return caller{}, bad
	}
	d, _, err := records.Get[DeviceRec](ctx, r.st, "pacerelle.auth", "device", parts[2], devices.KeyOf(parts[0], table.Values{"party": parts[1], "id": parts[2]}))
	if vp.IsKind(err, vp.KindNotFound) {
		return caller{}, bad
	}
	if err != nil {
		return caller{}, err
	}
	sum := sha256.Sum256([]byte(CredentialPrefix + rest))
	want, _ := hex.DecodeString(d.CredHash)
	if len(want) != len(sum) || subtle.ConstantTimeCompare(sum[:], want) != 1 {
		return caller{}, bad
	}
	return caller{tenant: parts[0], party: parts[1], device: parts[2], pendingWith: d.PendingWith}, nil
}

// refusePending is the refusal of a call that a device whose pairing is
// not confirmed may not make, naming the step its pairing still needs.
func (r *Relay) refusePending(ctx context.Context, c caller) error {
	const op = "pacerelle.auth"
	p, ok, err := r.pairingOf(ctx, op, c.tenant, c.pendingWith, c.party)
	if err != nil {
		return err
	}
	if !ok || p.PersonDevice != c.device {
		return vp.Errorf(op, vp.KindForbidden, "Authorization", "device %q is not confirmed: its pairing with %s was dropped or replaced; start a new pairing", c.device, c.pendingWith)
	}
	return vp.Errorf(op, vp.KindForbidden, "Authorization", "device %q is not confirmed: its pairing with %s still needs %s; until it is confirmed the device only takes pairing steps (it sends and reads nothing)",
		c.device, c.pendingWith, missingStep(p))
}

func newCredential(tenant, party, device string) (secret, hash string) {
	loc := base64.RawURLEncoding.EncodeToString([]byte(tenant + "\x00" + party + "\x00" + device))
	b := make([]byte, 32)
	rand.Read(b)
	secret = CredentialPrefix + loc + "." + hex.EncodeToString(b)
	sum := sha256.Sum256([]byte(secret))
	return secret, hex.EncodeToString(sum[:])
}

// ---- registration and pairing

func decodeDevice(op string, raw json.RawMessage, party string) (seal.Device, error) {
	var d seal.Device
	if err := json.Unmarshal(raw, &d); err != nil || d.ID == "" || len(d.KEMKey) == 0 || len(d.SignKey) == 0 {
		return d, vp.E(op, vp.KindInvalid, "device", "must be a device bundle {id, party, signKey, kemKey}")
	}
	if d.Party != party {
		return d, vp.Errorf(op, vp.KindForbidden, "device.party", "is %q; this credential is %q", d.Party, party)
	}
	return d, vp.CheckName(op, "device.id", d.ID, true)
}

func (r *Relay) putAgentDevice(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.register"
	var b wire.DeviceBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	d, err := decodeDevice(op, b.Device, c.party)
	if err != nil {
		return err
	}
	// The device and the list that names it are one write: a crash
	// between two writes would leave one without the other.
	err = table.Retry(req.Context(), op, "device.id", d.ID, func() error {
		ops, err := r.listOps(req.Context(), op, c.tenant, c.party, b.List)
		if err != nil {
			return err
		}
		it, err := devices.Item(op, c.tenant, DeviceRec{Party: c.party, ID: d.ID, Bundle: b.Device, CreatedAt: r.now().UnixMilli()})
		if err != nil {
			return err
		}
		return r.st.Write(req.Context(), append(ops, store.Put(it, store.Always))...)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"party": c.party, "device": d.ID})
	return nil
}

// storeList keeps a party's list when it is newer than the stored one. The
// relay does not vouch for it: the clients verify its signatures.
func (r *Relay) storeList(ctx context.Context, op, tenant, party string, raw json.RawMessage) error {
	return table.Retry(ctx, op, "list", party, func() error {
		ops, err := r.listOps(ctx, op, tenant, party, raw)
		if err != nil || len(ops) == 0 {
			return err
		}
		return r.st.Write(ctx, ops...)
	})
}

// listOps is the write that stores a party's list, conditioned on the list
// it replaces (retry on a failed condition), for a caller to commit with
// its other writes; none when the same version is stored.
func (r *Relay) listOps(ctx context.Context, op, tenant, party string, raw json.RawMessage) ([]store.Op, error) {
	var l seal.DeviceList
	if err := json.Unmarshal(raw, &l); err != nil || l.Version == 0 {
		return nil, vp.E(op, vp.KindInvalid, "list", "must be a signed device list {party, version, devices, signer, sig}")
	}
	if l.Party != party {
		return nil, vp.Errorf(op, vp.KindForbidden, "list.party", "is %q; this credential is %q", l.Party, party)
	}
	k := lists.KeyOf(tenant, table.Values{"party": party})
	cur, it, err := records.Get[ListRec](ctx, r.st, op, "list", party, k)
	cond := store.IfVersion(it.Version)
	if vp.IsKind(err, vp.KindNotFound) {
		cond, err = store.IfNotExists, nil
	}
	if err != nil {
		return nil, err
	}
	if cur.Version >= l.Version && cond.Kind != store.CondNotExists {
		if cur.Version == l.Version {
			return nil, nil
		}
		return nil, vp.Errorf(op, vp.KindConflict, "list.version", "v%d is older than the stored v%d", l.Version, cur.Version)
	}
	item, err := lists.Item(op, tenant, ListRec{Party: party, Version: l.Version, List: raw})
	if err != nil {
		return nil, err
	}
	return []store.Op{store.Put(item, cond)}, nil
}

func (r *Relay) list(ctx context.Context, tenant, party string) (json.RawMessage, error) {
	l, _, err := records.Get[ListRec](ctx, r.st, "pacerelle.list", "party", party, lists.KeyOf(tenant, table.Values{"party": party}))
	return l.List, err
}

// addDevice registers another device of a person, by one of its confirmed
// devices: the body carries the new device and a newer device list that
// includes it, signed by the calling device. The relay does not vouch for
// that list; the agent's bridge accepts it only when a device it has
// pinned signed it (seal.Pins.Update), which is how a new device is
// confirmed. The device (its credential) and the list are one write.
func (r *Relay) addDevice(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.add_device"
	if !isPerson(c.party) {
		return vp.E(op, vp.KindForbidden, "Authorization", "a new device is added with the device credential of one of the person's devices")
	}
	var b wire.DeviceBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	d, err := decodeDevice(op, b.Device, c.party)
	if err != nil {
		return err
	}
	cred, hash := newCredential(c.tenant, c.party, d.ID)
	err = table.Retry(req.Context(), op, "device.id", d.ID, func() error {
		if _, _, err := records.Get[DeviceRec](req.Context(), r.st, op, "device.id", d.ID, devices.KeyOf(c.tenant, table.Values{"party": c.party, "id": d.ID})); err == nil {
			return vp.Errorf(op, vp.KindConflict, "device.id", "%q is already a device of %s; choose another name", d.ID, c.party)
		} else if !vp.IsKind(err, vp.KindNotFound) {
			return err
		}
		ops, err := r.listOps(req.Context(), op, c.tenant, c.party, b.List)
		if err != nil {
			return err
		}
		it, err := devices.Item(op, c.tenant, DeviceRec{Party: c.party, ID: d.ID, Bundle: b.Device, CredHash: hash, CreatedAt: r.now().UnixMilli()})
		if err != nil {
			return err
		}
		return r.st.Write(req.Context(), append(ops, store.Put(it, store.IfNotExists))...)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.DeviceAdded{Party: c.party, Device: d.ID, Credential: cred})
	return nil
}

func (r *Relay) getList(w http.ResponseWriter, req *http.Request, c caller) error {
	party := req.PathValue("party")
	if party != c.party {
		// A pending pairing is enough to read the other's list: it holds
		// public keys that the pairing steps show both sides anyway.
		_, ok, err := r.pairingOf(req.Context(), "pacerelle.list", c.tenant, c.party, party)
		if err != nil {
			return err
		}
		if !ok {
			return vp.Errorf("pacerelle.list", vp.KindNotFound, "party", "%q is not paired with you", party)
		}
	}
	l, err := r.list(req.Context(), c.tenant, party)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(l)
	return err
}

func (r *Relay) putList(w http.ResponseWriter, req *http.Request, c caller) error {
	var raw json.RawMessage
	if err := readJSON("pacerelle.list", req, &raw); err != nil {
		return err
	}
	if err := r.storeList(req.Context(), "pacerelle.list", c.tenant, c.party, raw); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"stored": true})
	return nil
}

// ---- messages

func (r *Relay) send(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.send"
	var b wire.SendBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	if err := vp.CheckName(op, "id", b.ID, true); err != nil {
		return err
	}
	if err := vp.CheckName(op, "conversation", b.Conversation, true); err != nil {
		return err
	}
	if len(b.Envelope) == 0 || len(b.Envelope) > MaxEnvelopeBytes {
		return vp.Errorf(op, vp.KindInvalid, "envelope", "must be 1 to %d bytes", MaxEnvelopeBytes)
	}
	// The relay cannot open the envelope, but it refuses one whose signed
	// header disagrees with how it is asked to route it.
	env, err := seal.Decode(b.Envelope)
	if err != nil {
		return vp.E(op, vp.KindInvalid, "envelope", "is not a pacerelle envelope")
	}
	if env.FromParty != c.party || env.MessageID != b.ID || env.Conversation != b.Conversation || !slices.Equal(env.To, b.To) {
		return vp.E(op, vp.KindInvalid, "envelope", "its header (from, id, conversation, to) does not match the request")
	}
	res := wire.SendResult{ID: b.ID, Seq: map[string]int64{}}
	for _, to := range b.To {
		p, ok, err := r.pairingOf(req.Context(), op, c.tenant, c.party, to)
		if err != nil {
			return err
		}
		if !ok || to == c.party {
			return vp.Errorf(op, vp.KindForbidden, "to", "%q is not paired with %s", to, c.party)
		}
		if p.Confirmation == nil {
			return vp.Errorf(op, vp.KindForbidden, "to", "the pairing of %s and %s is not confirmed: it still needs %s; no envelope is accepted before",
				p.Agent, p.Person, missingStep(p))
		}
	}
	for _, to := range b.To {
		seq, dup, err := r.append(req.Context(), c.tenant, wire.Message{Party: to, ID: b.ID, From: c.party, Conversation: b.Conversation, Envelope: b.Envelope})
		if err != nil {
			return err
		}
		res.Seq[to], res.Duplicate = seq, res.Duplicate || dup
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (r *Relay) inbox(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.fetch"
	if c.party == "" {
		return vp.E(op, vp.KindForbidden, wire.AgentHeader, "name the agent whose inbox to read")
	}
	after, limit, err := pageArgs(op, req)
	if err != nil {
		return err
	}
	msgs, more, err := r.fetch(req.Context(), c.tenant, c.party, after, limit)
	if err != nil {
		return err
	}
	page := wire.InboxPage{Messages: msgs, Cursor: after, HasMore: more}
	if len(msgs) > 0 {
		page.Cursor = msgs[len(msgs)-1].Seq
	}
	if page.Head, err = r.head(req.Context(), c.tenant, c.party); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func pageArgs(op string, req *http.Request) (after int64, limit int, err error) {
	q := req.URL.Query()
	limit = DefaultFetch
	if s := q.Get("after"); s != "" {
		if after, err = strconv.ParseInt(s, 10, 64); err != nil || after < 0 {
			return 0, 0, vp.E(op, vp.KindInvalid, "after", "must be a sequence number ≥ 0")
		}
	}
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > MaxFetch {
			return 0, 0, vp.Errorf(op, vp.KindInvalid, "limit", "must be between 1 and %d", MaxFetch)
		}
	}
	return after, limit, nil
}

func (r *Relay) postAck(w http.ResponseWriter, req *http.Request, c caller) error {
	var b struct {
		Seq int64 `json:"seq"`
	}
	if err := readJSON("pacerelle.ack", req, &b); err != nil {
		return err
	}
	if c.party == "" || b.Seq < 0 {
		return vp.E("pacerelle.ack", vp.KindInvalid, "seq", "must be a sequence number ≥ 0 of your inbox")
	}
	seq, err := r.ack(req.Context(), c.tenant, c.party, c.device, b.Seq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int64{"acked": seq})
	return nil
}

// MaxConversations is the most conversations one listing returns.
const MaxConversations = 1000

func (r *Relay) listConversations(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.conversations"
	if c.party == "" {
		return vp.E(op, vp.KindForbidden, wire.AgentHeader, "name the agent whose conversations to list")
	}
	rows, err := records.QueryAll(req.Context(), r.st, conversations.Query(c.tenant, store.Primary, table.Values{"party": c.party}), MaxConversations)
	if err != nil {
		return records.Err(op, err)
	}
	out := make([]wire.Conversation, 0, len(rows))
	for _, it := range rows {
		cv, err := records.Decode[wire.Conversation](op, it)
		if err != nil {
			return err
		}
		out = append(out, cv)
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": out})
	return nil
}

const doorbellPath = "/pacerelle/v1/doorbell"

// Subprotocol is the doorbell's WebSocket subprotocol. A browser cannot
// set Authorization on a WebSocket, so it offers its device credential as
// a second subprotocol, SubprotocolBearer+credential, next to this one;
// the relay answers with this one only, never echoing the credential.
const (
	Subprotocol       = "pacerelle.v1"
	SubprotocolBearer = "pacerelle.bearer."
)

func subprotocolBearer(h http.Header) (string, bool) {
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if cred, ok := strings.CutPrefix(strings.TrimSpace(p), SubprotocolBearer); ok {
				return cred, true
			}
		}
	}
	return "", false
}

// doorbell is a WebSocket that only says where the inbox head is: first
// on connect, then after every append. Data is always fetched over HTTP.
func (r *Relay) doorbell(w http.ResponseWriter, req *http.Request, c caller) error {
	if c.party == "" {
		return vp.E("pacerelle.doorbell", vp.KindForbidden, wire.AgentHeader, "name the agent whose inbox to watch")
	}
	if r.pusher != nil { // on AWS: a Lambda cannot hold a WebSocket
		return vp.E("pacerelle.doorbell", vp.KindNotFound, "doorbell",
			"this relay's doorbell is its WebSocket API (the stack's PacerelleWebSocketUrl output): pass it as --ws-url / PACERELLE_WS_URL")
	}
	ch, stop := r.bell.subscribe(c.tenant + "/" + c.party)
	defer stop()
	head, err := r.head(req.Context(), c.tenant, c.party)
	if err != nil {
		return err
	}
	conn, err := websocket.Accept(w, req, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		r.log.WarnContext(req.Context(), "pacerelle doorbell accept", "err", err)
		return nil
	}
	defer conn.CloseNow()
	// A client's message is a ping (its heartbeat for API Gateway's idle
	// timeout, push.go): answered with "no news", which is all the client
	// needs from this doorbell, which says the head on connect.
	conn.SetReadLimit(1 << 10)
	pings := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	go func() {
		defer cancel()
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				return
			}
			select {
			case pings <- struct{}{}:
			default:
			}
		}
	}()
	ring := func(seq int64) error {
		b, _ := json.Marshal(wire.Ring{Seq: seq})
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return conn.Write(wctx, websocket.MessageText, b)
	}
	if err := ring(head); err != nil {
		return nil
	}
	ping := time.NewTicker(30 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "closing")
			return nil
		case seq := <-ch:
			if ring(seq) != nil {
				return nil
			}
		case <-pings:
			if ring(-1) != nil { // the head was said on connect and after each append
				return nil
			}
		case <-ping.C:
			if ring(-1) != nil { // a heartbeat; -1 is "no news"
				return nil
			}
		}
	}
}

// ---- plumbing

func readJSON(op string, req *http.Request, v any) error {
	dec := json.NewDecoder(req.Body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return vp.Errorf(op, vp.KindTooLarge, "body", "the request is over %d bytes", tooBig.Limit)
		}
		return vp.Errorf(op, vp.KindInvalid, "body", "is not the expected JSON: %v", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (r *Relay) writeErr(w http.ResponseWriter, req *http.Request, err error) {
	kind := vp.KindOf(err)
	status := map[vp.Kind]int{
		vp.KindInvalid: 400, vp.KindTooLarge: 413, vp.KindUnauthorized: 401, vp.KindForbidden: 403,
		vp.KindNotFound: 404, vp.KindConflict: 409, vp.KindUnavailable: 503, vp.KindRateLimited: 429,
	}[kind]
	body := wire.ErrorBody{Error: err.Error(), Kind: kind.String()}
	var ve *vp.Error
	if errors.As(err, &ve) {
		body.Field = ve.Field
	}
	if d, ok := vp.RetryAfter(err); ok && status == http.StatusTooManyRequests {
		body.RetryAfterSeconds = int64((d + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(body.RetryAfterSeconds, 10))
	}
	if status == 0 {
		status = http.StatusInternalServerError
		r.log.ErrorContext(req.Context(), "pacerelle", "path", req.URL.Path, "err", err)
		body.Error = "internal error"
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="pacerelle"`)
	}
	writeJSON(w, status, body)
}

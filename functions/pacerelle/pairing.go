package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
)

// RefusedKeep bounds the refused pairings kept for get_status.
const RefusedKeep = 20

// PendingTTL is how long a started pairing is shown: one the person did
// not confirm by then (they said the codes differ, or left) expires, and
// a late confirmation of it is refused like one never shown.
const PendingTTL = time.Hour

// PendingPairing is a pairing a person started and has not confirmed
// yet (pairing v2, seal/sas.go). This bridge answered the device's
// commitment with its own nonce (Nonce); once the device revealed its
// nonce and it matched the commitment, the code is shown (Code): the
// person compares it with the code their device shows BEFORE confirming.
type PendingPairing struct {
	Person      string `json:"person"`
	Device      string `json:"device"`
	Code        string `json:"code,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	StartedAt   int64  `json:"startedAt"`
	Commit      []byte `json:"commit,omitempty"`
	Nonce       []byte `json:"nonce,omitempty"`
	PersonNonce []byte `json:"personNonce,omitempty"`
}

// shownPairing is a pending pairing as get_status shows it: only once its
// code can be compared.
type shownPairing struct {
	Person      string `json:"person"`
	Device      string `json:"device"`
	Code        string `json:"code"`
	Fingerprint string `json:"fingerprint"`
	StartedAt   int64  `json:"startedAt"`
}

func (s *State) shownPairings() []shownPairing {
	out := []shownPairing{}
	for _, p := range s.PendingPairings {
		if p.Code != "" {
			out = append(out, shownPairing{Person: p.Person, Device: p.Device, Code: p.Code, Fingerprint: p.Fingerprint, StartedAt: p.StartedAt})
		}
	}
	return out
}

// PairingStart is a pairing start this bridge answered, for its limits.
type PairingStart struct {
	Person string `json:"person"`
	At     int64  `json:"at"`
}

// The bridge's own pairing limits, on top of the relay's (which a relay
// that lies does not keep): the starts it answers per person and in all,
// per window. Any failed step refuses the pending pairing at once.
const (
	BridgeStartsPerPerson = 5
	BridgeStartsTotal     = 20
	BridgeStartsWindow    = time.Hour
)

// RefusedPairing is a confirmation this bridge would not pin.
type RefusedPairing struct {
	Person      string `json:"person"`
	Device      string `json:"device"`
	Fingerprint string `json:"fingerprint,omitempty"`
	StartedAt   int64  `json:"startedAt"`
	ListVersion uint64 `json:"listVersion,omitempty"` // the person's device list it came with
	Reason      string `json:"reason"`
	At          int64  `json:"at"`
}

// Reasons a pairing is refused.
const (
	refusedNotAnswered   = "this bridge never answered this pairing's commitment (it was answered by someone else, or before this bridge's state was reset): start the pairing again while the agent's bridge is running"
	refusedCommitChanged = "the pairing's commitment changed after this bridge answered it (a replayed or reordered message?): start the pairing again"
	refusedNotOurAnswer  = "the answer the relay shows for this pairing is not the one this bridge made (a replayed or forged answer?): start the pairing again"
	refusedReveal        = "the device's reveal does not match the commitment it made at the start (was a key or nonce substituted?): start the pairing again"
	refusedKeyChanged    = "the device key changed since its code was shown as pending (was a key substituted?): start the pairing again and compare the new code"
	refusedExpired       = "the pairing was not confirmed within an hour of its start: start it again"
	refusedBadSig        = "the confirmation does not verify against this bridge's view of the pairing (was the agent's key or nonce substituted toward the person?)"
	refusedV1            = "pairing v1 (a code without a commitment, which a relay can grind) is refused: update the person's app or command line and pair again"
)

// syncPairings reads the agent's pairings from the relay and moves each
// through pairing v2: it answers a new commitment with a fresh nonce
// (saved before it is sent, so that a start is answered once), shows the
// code once the device's reveal matches its commitment, and pins the
// device only when its confirmation verifies against this bridge's own
// view of both keys and both nonces.
func (b *Bridge) syncPairings(ctx context.Context) error {
	ps, err := b.client.Pairings(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	changed := false
	var answers []wire.AnswerBody
	for _, p := range ps {
		ch, ans := b.syncPairing(p)
		changed = changed || ch
		if ans != nil {
			answers = append(answers, *ans)
		}
	}
	if changed {
		if err := b.saveLocked(); err != nil {
			b.mu.Unlock()
			return err
		}
	}
	b.mu.Unlock()
	for _, a := range answers {
		if err := b.client.Answer(ctx, a); err != nil {
			// Answered again at the next sync, with the same nonce.
			b.log.Warn("pacerelle: answering a pairing", "person", a.Person, "err", err)
		}
	}
	return nil
}

// syncPairing applies one pairing; it reports whether the state changed
// and the answer to send, if any.
func (b *Bridge) syncPairing(p wire.PairingView) (bool, *wire.AnswerBody) {
	if len(p.PersonList) == 0 {
		return false, nil
	}
	var l seal.DeviceList
	if json.Unmarshal(p.PersonList, &l) != nil || l.Party != p.Person {
		return false, nil
	}
	d, ok := l.Find(p.PersonDevice)
	if !ok {
		return false, nil
	}
	fp := seal.Fingerprint(d)
	pi := slices.IndexFunc(b.st.PendingPairings, func(x PendingPairing) bool { return x.Person == p.Person })
	cur, pinned := b.st.Pins.Lists[l.Party]
	if pd, has := cur.Find(d.ID); len(p.Confirmation) > 0 && pinned && has && seal.Fingerprint(pd) == fp {
		// Paired already. A newer list is a device added by a pinned one:
		// Pins.Update takes it only when a pinned device signed it.
		changed := false
		if pi >= 0 && b.st.PendingPairings[pi].StartedAt == p.CreatedAt {
			b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
			changed = true
		}
		if cur.Version >= l.Version || b.refusedAlready(p, fp, l.Version) {
			return changed, nil
		}
		if err := b.st.Pins.Update(l); err != nil {
			return b.refuse(p, fp, l.Version, "device list v"+fmt.Sprint(l.Version)+" refused: "+err.Error(), -1) || changed, nil
		}
		b.log.Info("pacerelle: the person's device list was updated by one of their paired devices", "person", p.Person, "version", l.Version)
		return true, nil
	}
	if b.refusedStart(p) {
		return false, nil // a refused start never shows a code again
	}
	if p.Version != seal.PairingVersion {
		return b.refuse(p, fp, 0, refusedV1, pi), nil
	}
	if b.now().Sub(time.UnixMilli(p.CreatedAt)) > PendingTTL {
		return b.refuse(p, fp, 0, refusedExpired, pi), nil
	}
	if pi < 0 || b.st.PendingPairings[pi].StartedAt != p.CreatedAt {
		return b.answer(p, fp, pi)
	}
	x := &b.st.PendingPairings[pi]
	switch {
	case !bytes.Equal(x.Commit, p.Commit):
		return b.refuse(p, fp, 0, refusedCommitChanged, pi), nil
	case p.AgentNonce == nil: // the answer did not reach the relay: again
		return false, x.answer(b.me)
	case !seal.SameNonce(p.AgentNonce, x.Nonce):
		return b.refuse(p, fp, 0, refusedNotOurAnswer, pi), nil
	case p.PersonNonce == nil:
		return false, nil // waiting for the device's reveal
	}
	if x.Code == "" {
		if d.ID != x.Device || seal.CheckReveal(x.Commit, d, p.PersonNonce) != nil {
			return b.refuse(p, fp, l.Version, refusedReveal, pi), nil
		}
		code, err := seal.PairingCode(d, p.PersonNonce, b.me.Device, x.Nonce)
		if err != nil {
			return b.refuse(p, fp, l.Version, refusedReveal, pi), nil
		}
		x.Code, x.Fingerprint, x.PersonNonce = code, fp, p.PersonNonce
		b.log.Info(fmt.Sprintf("pacerelle: pairing requested by %s device %s: code %s — the person must see the same code before confirming", p.Person, d.ID, code),
			"person", p.Person, "device", d.ID, "code", code, "fingerprint", fp)
		if len(p.Confirmation) == 0 {
			return true, nil
		}
		// Revealed and confirmed before this bridge looked (`pair --yes`
		// does both at once): the relay decides when the bridge sees a
		// confirmation, so refusing it for arriving early would stop no
		// relay, and the person could not start again over it. The
		// signature below binds it to this bridge's own nonce and key.
	} else if x.Fingerprint != fp || !seal.SameNonce(x.PersonNonce, p.PersonNonce) {
		return b.refuse(p, fp, l.Version, refusedKeyChanged, pi), nil
	}
	if len(p.Confirmation) == 0 {
		return false, nil // the person is comparing
	}
	tr, err := seal.PairingTranscript(d, x.PersonNonce, b.me.Device, x.Nonce)
	if err != nil || !d.Verify(seal.ConfirmLabel, tr, p.Confirmation) {
		return b.refuse(p, fp, l.Version, refusedBadSig, pi), nil
	}
	switch {
	case pinned && cur.Version >= l.Version:
		err = fmt.Errorf("device %s is not in the pinned list v%d", d.ID, cur.Version)
	case pinned:
		err = b.st.Pins.Update(l)
	default:
		err = b.st.Pins.Pin(l)
	}
	if err != nil {
		return b.refuse(p, fp, l.Version, err.Error(), pi), nil
	}
	code := x.Code
	b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
	b.st.Pairings = append(b.st.Pairings, PairingInfo{Person: p.Person, Device: d.ID, Code: code, Fingerprint: fp, PinnedAt: b.now().UnixMilli()})
	b.log.Info("pacerelle: paired: the confirmed key is the one whose code was shown pending", "person", p.Person, "device", d.ID, "code", code)
	return true, nil
}

// answer takes a new start: a pending pairing with a fresh nonce, within
// this bridge's limits. A new start replaces the person's earlier one.
func (b *Bridge) answer(p wire.PairingView, fp string, pi int) (bool, *wire.AnswerBody) {
	if p.AgentNonce != nil || p.PersonNonce != nil || len(p.Confirmation) > 0 {
		return b.refuse(p, fp, 0, refusedNotAnswered, pi), nil
	}
	if reason := b.overLimit(p.Person); reason != "" {
		return b.refuse(p, fp, 0, reason, pi), nil
	}
	if pi >= 0 {
		b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
	}
	x := PendingPairing{Person: p.Person, Device: p.PersonDevice, StartedAt: p.CreatedAt, Commit: p.Commit, Nonce: seal.NewPairingNonce()}
	b.st.PendingPairings = append(b.st.PendingPairings, x)
	b.st.PairingStarts = append(b.st.PairingStarts, PairingStart{Person: p.Person, At: b.now().UnixMilli()})
	b.log.Info("pacerelle: pairing started; answering the device's commitment", "person", p.Person, "device", p.PersonDevice)
	return true, x.answer(b.me)
}

func (x PendingPairing) answer(me *seal.Identity) *wire.AnswerBody {
	return &wire.AnswerBody{Person: x.Person, Commit: x.Commit, Nonce: x.Nonce, Sig: me.Sign(seal.AnswerLabel, seal.AnswerBytes(x.Commit, x.Nonce))}
}

// overLimit counts the starts answered in the window: a reason to refuse
// one more, naming the limit and when to retry, or "".
func (b *Bridge) overLimit(person string) string {
	now := b.now()
	cutoff := now.Add(-BridgeStartsWindow).UnixMilli()
	b.st.PairingStarts = slices.DeleteFunc(b.st.PairingStarts, func(s PairingStart) bool { return s.At <= cutoff })
	var mine []int64
	for _, s := range b.st.PairingStarts {
		if s.Person == person {
			mine = append(mine, s.At)
		}
	}
	retry := func(starts []int64, limit int) string {
		at := time.UnixMilli(starts[len(starts)-limit]).Add(BridgeStartsWindow)
		return fmt.Sprintf("retry after %s (in %s)", at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Second))
	}
	if len(mine) >= BridgeStartsPerPerson {
		return fmt.Sprintf("this bridge answers at most %d pairing starts per person per %s; %s", BridgeStartsPerPerson, BridgeStartsWindow, retry(mine, BridgeStartsPerPerson))
	}
	if all := len(b.st.PairingStarts); all >= BridgeStartsTotal {
		starts := make([]int64, all)
		for i, s := range b.st.PairingStarts {
			starts[i] = s.At
		}
		return fmt.Sprintf("this bridge answers at most %d pairing starts per %s in all; %s", BridgeStartsTotal, BridgeStartsWindow, retry(starts, BridgeStartsTotal))
	}
	return ""
}

// refusedStart reports whether this start of the person was refused.
func (b *Bridge) refusedStart(p wire.PairingView) bool {
	return slices.ContainsFunc(b.st.RefusedPairings, func(x RefusedPairing) bool { return x.Person == p.Person && x.StartedAt == p.CreatedAt })
}

func (b *Bridge) refusedAlready(p wire.PairingView, fp string, version uint64) bool {
	return slices.ContainsFunc(b.st.RefusedPairings, func(x RefusedPairing) bool {
		return x.Person == p.Person && x.Device == p.PersonDevice && x.Fingerprint == fp && x.StartedAt == p.CreatedAt && x.ListVersion == version
	})
}

// refuse records a refused pairing once, loudly, and drops its pending
// entry: only a new start shows a code again.
func (b *Bridge) refuse(p wire.PairingView, fp string, version uint64, reason string, pi int) bool {
	if pi >= 0 {
		b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
	}
	b.st.RefusedPairings = append(b.st.RefusedPairings, RefusedPairing{Person: p.Person, Device: p.PersonDevice, Fingerprint: fp, StartedAt: p.CreatedAt, ListVersion: version, Reason: reason, At: b.now().UnixMilli()})
	b.trimRefused()
	b.log.Error("pacerelle: PAIRING REFUSED: the device is not trusted", "person", p.Person, "device", p.PersonDevice, "fingerprint", fp, "reason", reason)
	return true
}

func (b *Bridge) trimRefused() {
	if n := len(b.st.RefusedPairings); n > RefusedKeep {
		b.st.RefusedPairings = slices.Delete(b.st.RefusedPairings, 0, n-RefusedKeep)
	}
}

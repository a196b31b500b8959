package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
)

// RefusedKeep bounds the refused pairings kept for get_status.
const RefusedKeep = 20

// PendingTTL is how long a started pairing is shown: one the person did
// not confirm by then (they said the codes differ, or left) expires, and
// a late confirmation of it is refused like one never shown.
const PendingTTL = time.Hour

// PendingPairing is a pairing a person started and has not confirmed
// yet, with the code of the device key the relay showed this bridge: the
// person compares it with the code their device shows BEFORE confirming,
// so a key the relay substituted toward the bridge is seen then.
type PendingPairing struct {
	Person      string `json:"person"`
	Device      string `json:"device"`
	Code        string `json:"code"`
	Fingerprint string `json:"fingerprint"`
	StartedAt   int64  `json:"startedAt"`
}

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

// Reasons a confirmation is refused.
const (
	refusedNotShown   = "this pairing was never shown as pending here, so nobody could compare its code: start the pairing again while the agent's bridge is running"
	refusedKeyChanged = "the device key changed since its code was shown as pending (was a key substituted?): start the pairing again and compare the new code"
	refusedExpired    = "the pairing was not confirmed within an hour of its start: start it again"
	refusedBadSig     = "the confirmation does not verify against this bridge's key (was the agent's key substituted toward the person?)"
)

// syncPairings reads the agent's pairings from the relay. A started one
// is shown as pending with its code; a confirmed one is pinned only when
// the confirmed key is the one whose code was shown pending and its
// confirmation verifies against this bridge's own key: a relay that
// showed the person another agent key cannot produce it, and one that
// swaps the person's key after the codes were compared is refused.
func (b *Bridge) syncPairings(ctx context.Context) error {
	ps, err := b.client.Pairings(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	changed := false
	for _, p := range ps {
		if b.syncPairing(p) {
			changed = true
		}
	}
	if changed {
		return b.saveLocked()
	}
	return nil
}

// syncPairing applies one pairing; it reports whether the state changed.
func (b *Bridge) syncPairing(p relay.PairingView) bool {
	if len(p.PersonList) == 0 {
		return false
	}
	var l seal.DeviceList
	if json.Unmarshal(p.PersonList, &l) != nil || l.Party != p.Person {
		return false
	}
	d, ok := l.Find(p.PersonDevice)
	if !ok {
		return false
	}
	fp := seal.Fingerprint(d)
	pi := slices.IndexFunc(b.st.PendingPairings, func(x PendingPairing) bool { return x.Person == p.Person })
	if len(p.Confirmation) == 0 {
		return b.showPending(p, d, fp, pi)
	}
	cur, pinned := b.st.Pins.Lists[l.Party]
	if pd, has := cur.Find(d.ID); pinned && has && seal.Fingerprint(pd) == fp {
		// Paired already. A newer list is a device added by a pinned one:
		// Pins.Update takes it only when a pinned device signed it.
		changed := false
		if pi >= 0 {
			b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
			changed = true
		}
		if cur.Version >= l.Version || b.refusedAlready(p, fp, l.Version) {
			return changed
		}
		if err := b.st.Pins.Update(l); err != nil {
			return b.refuse(p, fp, l.Version, "device list v"+fmt.Sprint(l.Version)+" refused: "+err.Error(), -1) || changed
		}
		b.log.Info("pacerelle: the person's device list was updated by one of their paired devices", "person", p.Person, "version", l.Version)
		return true
	}
	if b.refusedAlready(p, fp, l.Version) {
		return false
	}
	switch {
	case pi < 0 || b.st.PendingPairings[pi].Device != d.ID:
		return b.refuse(p, fp, l.Version, refusedNotShown, pi)
	case b.st.PendingPairings[pi].Fingerprint != fp:
		return b.refuse(p, fp, l.Version, refusedKeyChanged, pi)
	case !d.Verify("pairing", seal.Transcript(b.me.Device, d), p.Confirmation):
		return b.refuse(p, fp, l.Version, refusedBadSig, pi)
	}
	var err error
	switch {
	case pinned && cur.Version >= l.Version:
		err = fmt.Errorf("device %s is not in the pinned list v%d", d.ID, cur.Version)
	case pinned:
		err = b.st.Pins.Update(l)
	default:
		err = b.st.Pins.Pin(l)
	}
	if err != nil {
		return b.refuse(p, fp, l.Version, err.Error(), pi)
	}
	code := seal.Code(b.me.Device, d)
	b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
	b.st.Pairings = append(b.st.Pairings, PairingInfo{Person: p.Person, Device: d.ID, Code: code, Fingerprint: fp, PinnedAt: b.now().UnixMilli()})
	b.log.Info("pacerelle: paired: the confirmed key is the one whose code was shown pending", "person", p.Person, "device", d.ID, "code", code)
	return true
}

// showPending records a started pairing and logs its code once. A key
// that changes under the same start is not shown instead: the person may
// have compared the first code already, so the pairing must start again.
func (b *Bridge) showPending(p relay.PairingView, d seal.Device, fp string, pi int) bool {
	if slices.ContainsFunc(b.st.RefusedPairings, func(x RefusedPairing) bool { return x.Person == p.Person && x.StartedAt == p.CreatedAt }) {
		return false // this start was refused: it never shows a code again
	}
	if b.now().Sub(time.UnixMilli(p.CreatedAt)) > PendingTTL {
		if pi >= 0 {
			b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1)
		}
		b.st.RefusedPairings = append(b.st.RefusedPairings, RefusedPairing{Person: p.Person, Device: p.PersonDevice, Fingerprint: fp, StartedAt: p.CreatedAt,
			Reason: refusedExpired, At: b.now().UnixMilli()})
		b.trimRefused()
		b.log.Warn("pacerelle: pairing expired unconfirmed", "person", p.Person, "device", d.ID)
		return true
	}
	if pi >= 0 {
		x := b.st.PendingPairings[pi]
		if x.Device == d.ID && x.Fingerprint == fp && x.StartedAt == p.CreatedAt {
			return false
		}
		if x.StartedAt == p.CreatedAt {
			return b.refuse(p, fp, 0, refusedKeyChanged, pi)
		}
		b.st.PendingPairings = slices.Delete(b.st.PendingPairings, pi, pi+1) // a new start replaces it
	}
	code := seal.Code(b.me.Device, d)
	b.st.PendingPairings = append(b.st.PendingPairings, PendingPairing{Person: p.Person, Device: d.ID, Code: code, Fingerprint: fp, StartedAt: p.CreatedAt})
	b.log.Info(fmt.Sprintf("pacerelle: pairing requested by %s device %s: code %s — the person must see the same code before confirming", p.Person, d.ID, code),
		"person", p.Person, "device", d.ID, "code", code, "fingerprint", fp)
	return true
}

func (b *Bridge) refusedAlready(p relay.PairingView, fp string, version uint64) bool {
	return slices.ContainsFunc(b.st.RefusedPairings, func(x RefusedPairing) bool {
		return x.Person == p.Person && x.Device == p.PersonDevice && x.Fingerprint == fp && x.StartedAt == p.CreatedAt && x.ListVersion == version
	})
}

// refuse records a refused pairing once, loudly, and drops its pending
// entry: only a new start shows a code again.
func (b *Bridge) refuse(p relay.PairingView, fp string, version uint64, reason string, pi int) bool {
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

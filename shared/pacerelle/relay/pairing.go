package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Pairing v2 (seal/sas.go) over the relay:
//
//	device  POST /pairings          {agent, version: 2, device, list, commit}  (person's VantagePeers token)
//	bridge  GET  /pairings?v=2      sees the commitment
//	bridge  POST /pairings/answer   {person, commit, nonce, sig}
//	device  GET  /pairings?v=2      sees the answer, checks it
//	device  POST /pairings/reveal   {agent, nonce}                              both screens now show the code
//	device  POST /pairings/confirm  {agent, sig}                                once the person saw the same code
//
// A step out of order (a reveal before the answer, a confirmation before
// the reveal) and a step replayed with other values (a second answer, a
// second reveal) are refused; the same step again is not a second step.
// A second start of the same device while its pairing is pending replaces
// it: the earlier pairing's answer and reveal are void and its code is
// never shown again. A start never replaces a confirmed device (its
// credential would stop working) nor a confirmed pairing, nor a pending
// pairing of another device: whoever holds the person's VantagePeers token
// could otherwise cut a paired device off. Until its pairing is confirmed
// a device only takes pairing steps: no envelope from or to it is stored.
// A client of pairing v1 (no version, no commitment) is refused with a
// message saying so, never served the old code.

// refuseV1 is the refusal of a v1 client.
const refuseV1 = "pairing v1 (a code over the two keys, without a commitment) is no longer accepted: a relay could grind it. " +
	"This relay speaks pairing v2 (commit-then-reveal); update this client"

func (r *Relay) startPairing(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.pair"
	if c.principal == nil || c.party != "" {
		return vp.E(op, vp.KindForbidden, "Authorization", "a pairing is started with the person's VantagePeers token, without "+wire.AgentHeader)
	}
	var b wire.PairingBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	if b.Version != seal.PairingVersion {
		return vp.Errorf(op, vp.KindInvalid, "version", "is %d: %s", b.Version, refuseV1)
	}
	if len(b.Commit) != 32 {
		return vp.Errorf(op, vp.KindInvalid, "commit", "must be the 32-byte commitment to the device and its nonce (seal.Commitment), not %d bytes", len(b.Commit))
	}
	if err := vp.CheckName(op, "agent", b.Agent, true); err != nil {
		return err
	}
	person, err := c.principal.ActAs(op, "person", b.Person)
	if err != nil {
		return err
	}
	party, agent := wire.PersonParty(person), wire.AgentParty(b.Agent)
	agentList, err := r.list(req.Context(), c.tenant, agent)
	if vp.IsKind(err, vp.KindNotFound) {
		return vp.Errorf(op, vp.KindNotFound, "agent", "agent %q has no registered bridge yet; start its pacerelle MCP server first", b.Agent)
	}
	if err != nil {
		return err
	}
	d, err := decodeDevice(op, b.Device, party)
	if err != nil {
		return err
	}
	cred, hash := newCredential(c.tenant, party, d.ID)
	p := wire.Pairing{Agent: agent, Person: party, PersonDevice: d.ID, Version: seal.PairingVersion, Commit: b.Commit, CreatedAt: r.now().UnixMilli()}
	// The counted start, the device (its credential), the person's list and
	// the pairing are one write, conditioned on what was checked.
	var ring outbox.Pending
	err = table.Retry(req.Context(), op, "device.id", d.ID, func() error {
		devCond, pairCond, err := r.startChecks(req.Context(), c.tenant, agent, party, d.ID)
		if err != nil {
			return err
		}
		limits, err := r.startLimitOps(req.Context(), c.tenant, party, agent)
		if err != nil {
			return err
		}
		list, err := r.listOps(req.Context(), op, c.tenant, party, b.List)
		if err != nil {
			return err
		}
		dev, err := devices.Item(op, c.tenant, DeviceRec{Party: party, ID: d.ID, Bundle: b.Device, CredHash: hash, PendingWith: agent, CreatedAt: p.CreatedAt})
		if err != nil {
			return err
		}
		it, err := pairings.Item(op, c.tenant, p)
		if err != nil {
			return err
		}
		if ring, err = r.ringPairing(req.Context(), c.tenant, agent); err != nil {
			return err
		}
		ops := append([]store.Op{store.Put(dev, devCond), store.Put(it, pairCond)}, limits...)
		ops = append(append(ops, list...), ring.Ops()...)
		return r.st.Write(req.Context(), ops...)
	})
	if err != nil {
		return err
	}
	r.rangPairing(req.Context(), c.tenant, agent, ring)
	writeJSON(w, http.StatusOK, wire.PairingStarted{Party: party, Agent: agent, Credential: cred, AgentList: agentList, Version: seal.PairingVersion, CreatedAt: p.CreatedAt})
	return nil
}

// startChecks refuses a start that would replace a confirmed device, a
// confirmed pairing or another device's pending pairing, and returns the
// conditions for the device's and the pairing's puts: what it read.
func (r *Relay) startChecks(ctx context.Context, tenant, agent, person, device string) (devCond, pairCond store.Cond, err error) {
	const op = "pacerelle.pair"
	dk := devices.KeyOf(tenant, table.Values{"party": person, "id": device})
	cur, dit, err := records.Get[DeviceRec](ctx, r.st, op, "device.id", device, dk)
	devCond = store.IfVersion(dit.Version)
	switch {
	case vp.IsKind(err, vp.KindNotFound):
		devCond = store.IfNotExists
	case err != nil:
		return devCond, pairCond, err
	case cur.PendingWith == "":
		return devCond, pairCond, vp.Errorf(op, vp.KindConflict, "device.id", "%q is a confirmed device of %s; a pairing start never replaces a confirmed device: "+
			"pair under another device name (vantagepeers pacerelle pair --device NAME), or add a device from a paired one (POST /pacerelle/v1/devices); the relay has no device removal yet", device, person)
	}
	pk := pairings.KeyOf(tenant, table.Values{"agent": agent, "person": person})
	prev, pit, err := records.Get[wire.Pairing](ctx, r.st, op, "agent", agent, pk)
	pairCond = store.IfVersion(pit.Version)
	switch {
	case vp.IsKind(err, vp.KindNotFound):
		pairCond = store.IfNotExists
	case err != nil:
		return devCond, pairCond, err
	case prev.Confirmation != nil && prev.AgentDevice != "":
		// A pairing with an agent device that is no longer in the agent's
		// list (its bridge was reset: a new key) is void — the person's
		// device refuses the new key anyway — and only the agent's token
		// can change that list: a new start may replace it.
		still, err := r.agentHasDevice(ctx, tenant, agent, prev.AgentDevice)
		if err != nil {
			return devCond, pairCond, err
		}
		if !still {
			return devCond, pairCond, nil
		}
		fallthrough
	case prev.Confirmation != nil:
		return devCond, pairCond, vp.Errorf(op, vp.KindConflict, "agent", "%s is already paired with %s (confirmed, device %q); a pairing start never replaces a confirmed pairing "+
			"while the agent keeps the key it was made with: add a device from the paired one (POST /pacerelle/v1/devices); the relay has no pairing removal yet", person, agent, prev.PersonDevice)
	case prev.PersonDevice != device:
		return devCond, pairCond, vp.Errorf(op, vp.KindConflict, "device.id", "a pairing of %s with %s is pending for device %q; a new start replaces only a pending pairing of the same device: "+
			"finish that pairing, or start again as device %q", person, agent, prev.PersonDevice, prev.PersonDevice)
	}
	return devCond, pairCond, nil
}

// agentHasDevice says whether id is in the agent's current device list; an
// unreadable list keeps the pairings made with it.
func (r *Relay) agentHasDevice(ctx context.Context, tenant, agent, id string) (bool, error) {
	raw, err := r.list(ctx, tenant, agent)
	if err != nil {
		return false, err
	}
	var l seal.DeviceList
	if json.Unmarshal(raw, &l) != nil {
		return true, nil
	}
	_, ok := l.Find(id)
	return ok, nil
}

// stepOutcome is what one pairing step did.
type stepOutcome struct {
	changed bool       // write the pairing
	failed  *vp.Error  // a failed reveal or confirmation: counted
	ring    bool       // ring the agent's doorbell with the write
	also    []store.Op // written with the pairing, when it changed
}

// step applies one pairing step to the pairing of agent and person. A
// failure is written (counted) before it is returned; at MaxFailures the
// pairing is deleted with it.
func (r *Relay) step(ctx context.Context, op, tenant, agent, person string, fn func(p *wire.Pairing) (stepOutcome, error)) error {
	k := pairings.KeyOf(tenant, table.Values{"agent": agent, "person": person})
	var ring outbox.Pending
	var failed *vp.Error
	rang := false
	err := table.Retry(ctx, op, "pairing", person, func() error {
		ring, failed, rang = outbox.Pending{}, nil, false
		p, it, err := records.Get[wire.Pairing](ctx, r.st, op, "pairing", person, k)
		if vp.IsKind(err, vp.KindNotFound) {
			return vp.Errorf(op, vp.KindNotFound, "pairing", "%s has no pairing with %s: start one", person, agent)
		}
		if err != nil {
			return err
		}
		if p.Version != seal.PairingVersion {
			return vp.E(op, vp.KindConflict, "pairing", "this pairing was made with pairing v1 and takes no v2 step; start a new pairing")
		}
		out, err := fn(&p)
		if err != nil {
			return err
		}
		var ops []store.Op
		switch {
		case out.failed != nil:
			p.Failures++
			failed = out.failed
			failed.Msg += "; " + r.failureLeft(p)
			if p.Failures >= r.limits.MaxFailures {
				ops = append(ops, store.Delete(k, store.IfVersion(it.Version)))
				r.log.WarnContext(ctx, "pacerelle: pending pairing dropped after failed steps", "agent", agent, "person", person, "failures", p.Failures)
				break
			}
			fallthrough
		case out.changed:
			item, err := pairings.Item(op, tenant, p)
			if err != nil {
				return err
			}
			ops = append(ops, store.Put(item, store.IfVersion(it.Version)))
		default:
			return nil
		}
		if out.failed == nil {
			ops = append(ops, out.also...)
		}
		if out.ring {
			if ring, err = r.ringPairing(ctx, tenant, agent); err != nil {
				return err
			}
			ops, rang = append(ops, ring.Ops()...), true
		}
		return r.st.Write(ctx, ops...)
	})
	if err != nil {
		return err
	}
	if rang {
		r.rangPairing(ctx, tenant, agent, ring)
	}
	if failed != nil {
		return failed
	}
	return nil
}

// agentDevice is the agent's device of id in its current list.
func (r *Relay) agentDevice(ctx context.Context, tenant, agent, id string) (seal.Device, bool) {
	raw, err := r.list(ctx, tenant, agent)
	var l seal.DeviceList
	if err != nil || json.Unmarshal(raw, &l) != nil {
		return seal.Device{}, false
	}
	return l.Find(id)
}

func (r *Relay) answerPairing(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.answer"
	var b wire.AnswerBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	if err := vp.CheckName(op, "person", b.Person, true); err != nil {
		return err
	}
	var l seal.DeviceList
	raw, err := r.list(req.Context(), c.tenant, c.party)
	if err != nil || json.Unmarshal(raw, &l) != nil {
		return vp.E(op, vp.KindConflict, "Authorization", "this agent has no device list: register its bridge first")
	}
	signer := ""
	for _, d := range l.Devices {
		if seal.CheckAnswer(d, b.Commit, b.Nonce, b.Sig) == nil {
			signer = d.ID
		}
	}
	if signer == "" {
		return vp.Errorf(op, vp.KindInvalid, "sig", "is not a signature of this agent's device over the commitment and a %d-byte nonce", seal.NonceSize)
	}
	err = r.step(req.Context(), op, c.tenant, c.party, b.Person, func(p *wire.Pairing) (stepOutcome, error) {
		switch {
		case !bytes.Equal(p.Commit, b.Commit):
			return stepOutcome{}, vp.E(op, vp.KindConflict, "commit", "is not the commitment of this pairing (a new start replaced it): answer the pending one")
		case p.AgentNonce != nil && seal.SameNonce(p.AgentNonce, b.Nonce):
			return stepOutcome{}, nil // the same answer again
		case p.AgentNonce != nil:
			return stepOutcome{}, vp.E(op, vp.KindConflict, "nonce", "this pairing was answered already; an answer is never replaced")
		}
		p.AgentNonce, p.AnswerSig, p.AgentDevice = b.Nonce, b.Sig, signer
		return stepOutcome{changed: true}, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"answered": true})
	return nil
}

func (r *Relay) revealPairing(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.reveal"
	if !isPerson(c.party) {
		return vp.E(op, vp.KindForbidden, "Authorization", "a pairing is revealed with the person's device credential")
	}
	var b wire.RevealBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	dev, err := r.deviceOf(req.Context(), op, c)
	if err != nil {
		return err
	}
	err = r.step(req.Context(), op, c.tenant, b.Agent, c.party, func(p *wire.Pairing) (stepOutcome, error) {
		switch {
		case p.PersonDevice != c.device:
			return stepOutcome{}, vp.Errorf(op, vp.KindForbidden, "Authorization", "this pairing was started by device %q, not this one", p.PersonDevice)
		case p.AgentNonce == nil:
			return stepOutcome{}, vp.E(op, vp.KindConflict, "nonce", "the agent has not answered yet; a reveal before the answer is refused: wait for the answer (GET /pacerelle/v1/pairings?v=2)")
		case p.PersonNonce != nil && seal.SameNonce(p.PersonNonce, b.Nonce):
			return stepOutcome{}, nil
		case p.PersonNonce != nil:
			return stepOutcome{}, vp.E(op, vp.KindConflict, "nonce", "this pairing was revealed already; a reveal is never replaced")
		case seal.CheckReveal(p.Commit, dev, b.Nonce) != nil:
			return stepOutcome{failed: vp.E(op, vp.KindInvalid, "nonce", "does not match the commitment this device made at the start")}, nil
		}
		p.PersonNonce = b.Nonce
		return stepOutcome{changed: true, ring: true}, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"revealed": true})
	return nil
}

func (r *Relay) confirmPairing(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.confirm"
	if !isPerson(c.party) {
		return vp.E(op, vp.KindForbidden, "Authorization", "a pairing is confirmed with the person's device credential")
	}
	var b wire.ConfirmBody
	if err := readJSON(op, req, &b); err != nil {
		return err
	}
	dev, err := r.deviceOf(req.Context(), op, c)
	if err != nil {
		return err
	}
	err = r.step(req.Context(), op, c.tenant, b.Agent, c.party, func(p *wire.Pairing) (stepOutcome, error) {
		switch {
		case p.PersonDevice != c.device:
			return stepOutcome{}, vp.Errorf(op, vp.KindForbidden, "Authorization", "this pairing was started by device %q, not this one", p.PersonDevice)
		case p.PersonNonce == nil:
			return stepOutcome{}, vp.E(op, vp.KindConflict, "sig", "the pairing is not revealed yet; a confirmation before the reveal is refused")
		case p.Confirmation != nil && bytes.Equal(p.Confirmation, b.Sig):
			return stepOutcome{}, nil
		case p.Confirmation != nil:
			return stepOutcome{}, vp.E(op, vp.KindConflict, "sig", "this pairing was confirmed already")
		}
		ad, ok := r.agentDevice(req.Context(), c.tenant, b.Agent, p.AgentDevice)
		tr, err := seal.PairingTranscript(dev, p.PersonNonce, ad, p.AgentNonce)
		if !ok || err != nil || !dev.Verify(seal.ConfirmLabel, tr, b.Sig) {
			return stepOutcome{failed: vp.E(op, vp.KindInvalid, "sig", "does not verify over this pairing's transcript (both devices and both nonces)")}, nil
		}
		// The device is confirmed with its pairing, in the same write: it
		// may send from then on, never before.
		dk := devices.KeyOf(c.tenant, table.Values{"party": c.party, "id": c.device})
		rec, it, err := records.Get[DeviceRec](req.Context(), r.st, op, "device", c.device, dk)
		if err != nil {
			return stepOutcome{}, err
		}
		var also []store.Op
		if rec.PendingWith != "" {
			rec.PendingWith = ""
			item, err := devices.Item(op, c.tenant, rec)
			if err != nil {
				return stepOutcome{}, err
			}
			also = append(also, store.Put(item, store.IfVersion(it.Version)))
		}
		p.Confirmation = b.Sig
		return stepOutcome{changed: true, ring: true, also: also}, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"confirmed": true})
	return nil
}

// deviceOf is the calling person device's registered keys.
func (r *Relay) deviceOf(ctx context.Context, op string, c caller) (seal.Device, error) {
	rec, _, err := records.Get[DeviceRec](ctx, r.st, op, "device", c.device, devices.KeyOf(c.tenant, table.Values{"party": c.party, "id": c.device}))
	if err != nil {
		return seal.Device{}, err
	}
	var d seal.Device
	if err := json.Unmarshal(rec.Bundle, &d); err != nil {
		return d, vp.Wrap(op, vp.KindInternal, err)
	}
	return d, nil
}

func (r *Relay) listPairings(w http.ResponseWriter, req *http.Request, c caller) error {
	const op = "pacerelle.pairings"
	if req.URL.Query().Get("v") != "2" {
		return vp.E(op, vp.KindInvalid, "v", refuseV1+" (list pairings with ?v=2)")
	}
	var q store.Query
	switch {
	case c.device == AgentDevice:
		q = pairings.Query(c.tenant, store.Primary, table.Values{"agent": c.party})
	case isPerson(c.party):
		q = pairings.Query(c.tenant, store.GSI1, table.Values{"person": c.party})
	default:
		return vp.E(op, vp.KindForbidden, "Authorization", "an agent or a person device may list its pairings")
	}
	rows, err := records.QueryAll(req.Context(), r.st, q, 1000)
	if err != nil {
		return records.Err(op, err)
	}
	out := []wire.PairingView{}
	for _, it := range rows {
		p, err := records.Decode[wire.Pairing](op, it)
		if err != nil {
			return err
		}
		v := wire.PairingView{Pairing: p}
		if v.PersonList, err = r.list(req.Context(), c.tenant, p.Person); err != nil && !vp.IsKind(err, vp.KindNotFound) {
			return err
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"pairings": out})
	return nil
}

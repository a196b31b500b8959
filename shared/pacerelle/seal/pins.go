package seal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// DeviceList is a party's devices at a version, signed by one of them.
// A new device joins only through a list signed by a device already pinned,
// which is how a new device is confirmed by an existing one.
type DeviceList struct {
	Party   string   `json:"party"`
	Version uint64   `json:"version"`
	Devices []Device `json:"devices"`
	Signer  string   `json:"signer"`
	Sig     []byte   `json:"sig"`
}

func (d Device) encode(w *writer) {
	w.str(d.Party)
	w.str(d.ID)
	w.bytes(d.SignKey)
	w.bytes(d.KEMKey)
}

func (l DeviceList) signed() []byte {
	var w writer
	w.str(l.Party)
	w.u64(l.Version)
	w.u16(len(l.Devices))
	for _, d := range l.Devices {
		d.encode(&w)
	}
	w.str(l.Signer)
	return w.b
}

// SignList makes version of signer's party's device list.
func SignList(signer *Identity, version uint64, devices []Device) DeviceList {
	l := DeviceList{Party: signer.Party, Version: version, Devices: slices.Clone(devices), Signer: signer.ID}
	l.Sig = signer.Sign("device-list", l.signed())
	return l
}

// Find returns the device id of the list.
func (l DeviceList) Find(id string) (Device, bool) {
	for _, d := range l.Devices {
		if d.ID == id {
			return d, true
		}
	}
	return Device{}, false
}

// verifyBy checks l's signature by a device of by.
func (l DeviceList) verifyBy(by DeviceList) error {
	signer, ok := by.Find(l.Signer)
	if !ok {
		return fmt.Errorf("seal: device list v%d of %s is signed by %s, which is not pinned", l.Version, l.Party, l.Signer)
	}
	if !signer.Verify("device-list", l.signed(), l.Sig) {
		return fmt.Errorf("seal: device list v%d of %s: %w", l.Version, l.Party, ErrSignature)
	}
	for _, d := range l.Devices {
		if d.Party != l.Party {
			return fmt.Errorf("seal: device %s of list %s names party %s", d.ID, l.Party, d.Party)
		}
	}
	return nil
}

// Pins are the device lists a device trusts, by party.
type Pins struct {
	Lists map[string]DeviceList `json:"lists"`
}

// Pin trusts a party's list for the first time: after the person compared
// the pairing code (PairingCode) on both devices. The list must be self-signed.
func (p *Pins) Pin(l DeviceList) error {
	if err := l.verifyBy(l); err != nil {
		return err
	}
	if cur, ok := p.Lists[l.Party]; ok && cur.Version > l.Version {
		return fmt.Errorf("seal: %s is pinned at v%d, newer than v%d", l.Party, cur.Version, l.Version)
	}
	if p.Lists == nil {
		p.Lists = map[string]DeviceList{}
	}
	p.Lists[l.Party] = l
	return nil
}

// Update replaces a pinned list by a newer one signed by a pinned device.
func (p *Pins) Update(l DeviceList) error {
	cur, ok := p.Lists[l.Party]
	if !ok {
		return fmt.Errorf("seal: %s is not pinned; pair first", l.Party)
	}
	if l.Version <= cur.Version {
		return fmt.Errorf("seal: %s list v%d is not newer than the pinned v%d", l.Party, l.Version, cur.Version)
	}
	if err := l.verifyBy(cur); err != nil {
		return err
	}
	p.Lists[l.Party] = l
	return nil
}

// Devices are the pinned devices of party.
func (p *Pins) Devices(party string) []Device { return p.Lists[party].Devices }

func (p *Pins) device(party, id string, version uint64) (Device, error) {
	l, ok := p.Lists[party]
	if !ok {
		return Device{}, ErrUnknownSender
	}
	if version > l.Version {
		return Device{}, ErrStaleList
	}
	d, ok := l.Find(id)
	if !ok {
		return Device{}, ErrUnknownSender
	}
	return d, nil
}

// Fingerprint is a short hex digest of a device's keys, for display.
func Fingerprint(d Device) string {
	var w writer
	d.encode(&w)
	sum := sha256.Sum256(w.b)
	return hex.EncodeToString(sum[:8])
}

package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// LoadFile restores the learner saved at path by SaveFile; a missing file
// (or no path) is a new learner.
func LoadFile(path string) (*Learner, error) {
	if path == "" {
		return New(Options{}), nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return New(Options{}), nil
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("not a templates state (%v)", err)
	}
	return Restore(Options{}, st)
}

// SaveFile writes the learner's state to path whole (through a rename),
// for a later LoadFile; no path saves nothing.
func (l *Learner) SaveFile(path string) error {
	if path == "" {
		return nil
	}
	raw, err := json.Marshal(l.State())
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

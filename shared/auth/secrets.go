package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidSecret reports whether s has the shape of a bearer secret.
func ValidSecret(s string) bool { return hex64.MatchString(s) }

// EnsureMaster returns the master token's hash. With override (a 64-hex
// secret, from VP_MASTER_TOKEN) that secret is the master token, and its
// hash is stored: another command on the same data directory without the
// variable (`token create`) then finds a master token and mints none of
// its own, which the server would refuse. Otherwise the stored hash is
// used, and on the very first start a master token is created: its secret
// is returned once in created and never stored.
func EnsureMaster(ctx context.Context, st store.Store, override string) (hash [32]byte, created string, err error) {
	it, err := st.Get(ctx, sysKey("master-sha256"))
	if override != "" {
		if !ValidSecret(override) {
			return hash, "", errors.New("VP_MASTER_TOKEN must be 64 lower-case hex characters (32 random bytes)")
		}
		hash = Hash(override)
		want := []byte(hex.EncodeToString(hash[:]))
		if err == nil && string(it.Data) == string(want) {
			return hash, "", nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return hash, "", err
		}
		return hash, "", st.Write(ctx, store.Put(sysItem("master-sha256", want), store.Always))
	}
	if err == nil {
		if _, err := hex.Decode(hash[:], it.Data); err != nil {
			return hash, "", fmt.Errorf("stored master hash is corrupt: %w", err)
		}
		return hash, "", nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return hash, "", err
	}
	secret := NewSecret()
	hash = Hash(secret)
	err = st.Write(ctx, store.Put(sysItem("master-sha256", []byte(hex.EncodeToString(hash[:]))), store.IfNotExists))
	if errors.Is(err, store.ErrConditionFailed) {
		return EnsureMaster(ctx, st, "") // another process created it first
	}
	if err != nil {
		return hash, "", err
	}
	return hash, secret, nil
}

// EnsureKey returns a named 32-byte server secret (for example the cursor
// signing key), creating it on first use.
func EnsureKey(ctx context.Context, st store.Store, name string) ([]byte, error) {
	k := sysKey("key:" + name)
	if it, err := st.Get(ctx, k); err == nil {
		return it.Data, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	err := st.Write(ctx, store.Put(sysItem("key:"+name, key), store.IfNotExists))
	if errors.Is(err, store.ErrConditionFailed) {
		return EnsureKey(ctx, st, name)
	}
	return key, err
}

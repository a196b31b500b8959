//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

func ownedByCaller(dir string) (bool, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return false, fmt.Errorf("data dir: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, nil
	}
	return int(st.Uid) == os.Getuid(), nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/vantagepeers/vantagepeers/shared/admintokens"
)

// tokensFor is the admin API of the deployment at mcpURL when set, else
// the data dir's tokens (announce: show a first-start master).
func tokensFor(ctx context.Context, e *env, mcpURL string, announce bool) (admintokens.Store, error) {
	if mcpURL != "" {
		master, err := readMaster(e.cmd, e.stdin)
		if err != nil {
			return nil, err
		}
		return admintokens.NewClient(mcpURL, master)
	}
	a, err := e.app(ctx)
	if err != nil {
		return nil, err
	}
	if announce {
		announceMaster(e.stderr, a, e.dataDir)
	}
	return a.Tokens, nil
}

// readMaster reads the master token from stdin, never a flag (ps and the
// shell's history show those); a terminal is refused, not waited on.
func readMaster(cmd string, stdin io.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return "", fmt.Errorf("%s --url: the admin (master) token is read from stdin, and stdin is a terminal: pipe it in, "+
				"e.g. aws secretsmanager get-secret-value --secret-id ID --query SecretString --output text | vantagepeers %s …", cmd, cmd)
		}
	}
	master, err := readSecret(stdin)
	if err != nil {
		return "", fmt.Errorf("%s --url: the admin (master) token on stdin: %w", cmd, err)
	}
	return master, nil
}

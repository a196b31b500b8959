package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/requester"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The person's side of Pacerelle on the command line, for scripts and
// tests: it is a subcommand here rather than of the bridge binary because
// it is the person's tool, not the agent's, and it talks to the relay that
// `vantagepeers serve` embeds.
const pacerelleUsage = `Usage:
  vantagepeers pacerelle pair --base-url URL --token VP_TOKEN --agent AGENT --person ME [--device NAME] [--code CODE | --yes]
  vantagepeers pacerelle add-device --agent AGENT --person ME --new-state-dir DIR --device NAME
  vantagepeers pacerelle send --agent AGENT --person ME --conversation C [--id ID] TEXT
  vantagepeers pacerelle wait --agent AGENT --person ME [--reply-to ID] [--count N] [--timeout 60s]

pair commits to the new device, waits (up to 2 minutes) for the agent's bridge to answer, then prints
the pairing code; it must equal the code the agent shows (get_status.pending_pairings).
--code CODE confirms when it matches; --yes confirms without comparing (tests only).
add-device makes another device of yours in DIR, confirmed by this one (it signs the new device list).
send prints {"id","seq"}; wait prints one JSON reply a line.
Device state: --state-dir (env PACERELLE_DEVICE_DIR, default ~/.pacerelle/devices).
`

// pacerelleFlags are the flags of the pacerelle subcommands; each
// subcommand registers its own.
type pacerelleFlags struct {
	dir, agent, person                                   string
	base, token, device, code, newDir, conv, id, replyTo string
	yes                                                  bool
	count                                                int
	timeout                                              time.Duration
}

func pacerelleCommand() *command {
	var f pacerelleFlags
	return &command{Name: "pacerelle", Page: pacerelleUsage, NoCommon: true,
		Synopsis: []string{"pacerelle pair | send | wait"},
		Summary:  "a person's Pacerelle device; vantagepeers pacerelle help",
		Subs:     []string{"pair", "add-device", "send", "wait"},
		BadSub: func(e *env, sub string) error {
			if sub == "" {
				fmt.Fprint(e.stdout, pacerelleUsage)
				return nil
			}
			fmt.Fprint(e.stderr, pacerelleUsage)
			return fmt.Errorf("unknown pacerelle command %q", sub)
		},
		Flags: func(fs *flag.FlagSet, sub string) { f.register(fs, sub) },
		Run:   func(ctx context.Context, e *env) error { return pacerelle(ctx, e, f) },
	}
}

func (f *pacerelleFlags) register(fs *flag.FlagSet, sub string) {
	home, _ := os.UserHomeDir()
	fs.StringVar(&f.dir, "state-dir", envOr("PACERELLE_DEVICE_DIR", filepath.Join(home, ".pacerelle", "devices")), "device state folder")
	fs.StringVar(&f.agent, "agent", "", "the agent id")
	fs.StringVar(&f.person, "person", envOr("PACERELLE_PERSON", ""), "your id (the VantagePeers identity of your token)")
	switch sub {
	case "pair":
		fs.StringVar(&f.base, "base-url", envOr("PACERELLE_BASE_URL", "http://127.0.0.1:8787"), "relay URL")
		fs.StringVar(&f.token, "token", envOr("VP_TOKEN", ""), "your VantagePeers token (env VP_TOKEN)")
		fs.StringVar(&f.device, "device", "cli", "this device's name")
		fs.StringVar(&f.code, "code", "", "the code the agent shows")
		fs.BoolVar(&f.yes, "yes", false, "confirm without comparing codes (tests only)")
	case "add-device":
		fs.StringVar(&f.newDir, "new-state-dir", "", "where the new device keeps its state")
		fs.StringVar(&f.device, "device", "", "the new device's name")
	case "send":
		fs.StringVar(&f.conv, "conversation", "", "conversation id")
		fs.StringVar(&f.id, "id", "", "message id (default: a fresh one; reuse it to resend)")
	case "wait":
		fs.StringVar(&f.replyTo, "reply-to", "", "wait for a reply to this request")
		fs.IntVar(&f.count, "count", 1, "wait for this many replies")
		fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "give up after")
	}
}

func pacerelle(ctx context.Context, e *env, f pacerelleFlags) error {
	stdin, stderr, stdout := e.stdin, e.stderr, e.stdout
	switch e.sub {
	case "pair":
		if err := required(map[string]string{"--agent": f.agent, "--person": f.person, "--token": f.token}); err != nil {
			return err
		}
		d, got, err := requester.Pair(ctx, requester.PairOptions{Dir: f.dir, BaseURL: f.base, Token: f.token, Agent: f.agent, Person: f.person, DeviceName: f.device,
			Confirm: func(c, fp string) bool {
				fmt.Fprintf(stderr, "pairing code: %s (agent key %s)\n", c, fp)
				switch {
				case f.code != "":
					return c == strings.TrimSpace(f.code)
				case f.yes:
					return true
				}
				fmt.Fprint(stderr, "compare it with the code the AGENT shows for this pairing now (get_status pending_pairings, or its log \"pairing requested by ...\"); confirm only if they are the same. Same code? [y/N] ")
				line, _ := bufio.NewReader(stdin).ReadString('\n')
				return strings.EqualFold(strings.TrimSpace(line), "y")
			}})
		if err != nil {
			return err
		}
		defer d.Close()
		return json.NewEncoder(stdout).Encode(map[string]any{"paired": true, "agent": f.agent, "code": got})
	case "add-device":
		if err := required(map[string]string{"--agent": f.agent, "--person": f.person, "--new-state-dir": f.newDir, "--device": f.device}); err != nil {
			return err
		}
		d, err := requester.Open(f.dir, f.person, f.agent)
		if err != nil {
			return err
		}
		defer d.Close()
		nd, err := d.AddDevice(ctx, f.newDir, f.device)
		if err != nil {
			return err
		}
		defer nd.Close()
		return json.NewEncoder(stdout).Encode(map[string]any{"added": f.device, "stateDir": f.newDir})
	case "send":
		text := strings.Join(e.args, " ")
		if err := required(map[string]string{"--agent": f.agent, "--person": f.person, "--conversation": f.conv, "TEXT": text}); err != nil {
			return err
		}
		if f.id == "" {
			f.id = vp.NewIDs(nil).New("req")
		}
		d, err := requester.Open(f.dir, f.person, f.agent)
		if err != nil {
			return err
		}
		defer d.Close()
		res, err := d.Send(ctx, f.conv, f.id, text)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"id": res.ID, "seq": res.Seq, "duplicate": res.Duplicate})
	case "wait":
		if err := required(map[string]string{"--agent": f.agent, "--person": f.person}); err != nil {
			return err
		}
		d, err := requester.Open(f.dir, f.person, f.agent)
		if err != nil {
			return err
		}
		defer d.Close()
		wctx, cancel := context.WithTimeout(ctx, f.timeout)
		defer cancel()
		enc := json.NewEncoder(stdout)
		n := 0
		_, err = d.Wait(wctx, func(rs []requester.Reply) bool {
			for _, r := range rs[n:] {
				if f.replyTo == "" || r.ReplyTo == f.replyTo {
					_ = enc.Encode(r)
				}
			}
			n = len(rs)
			matched := 0
			for _, r := range rs {
				if f.replyTo == "" || r.ReplyTo == f.replyTo {
					matched++
				}
			}
			return matched >= f.count
		})
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("no reply within %v", f.timeout)
		}
		return err
	}
	return fmt.Errorf("unknown pacerelle command %q", e.sub)
}

func required(vals map[string]string) error {
	for name, v := range vals {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s is required", name)
		}
	}
	return nil
}

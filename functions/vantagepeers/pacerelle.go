package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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

func pacerelleCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" {
		fmt.Fprint(stdout, pacerelleUsage)
		return nil
	}
	fs := flag.NewFlagSet("pacerelle "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	home, _ := os.UserHomeDir()
	dir := fs.String("state-dir", envOr("PACERELLE_DEVICE_DIR", filepath.Join(home, ".pacerelle", "devices")), "device state folder")
	agent := fs.String("agent", "", "the agent id")
	person := fs.String("person", envOr("PACERELLE_PERSON", ""), "your id (the VantagePeers identity of your token)")
	switch args[0] {
	case "pair":
		base := fs.String("base-url", envOr("PACERELLE_BASE_URL", "http://127.0.0.1:8787"), "relay URL")
		token := fs.String("token", envOr("VP_TOKEN", ""), "your VantagePeers token (env VP_TOKEN)")
		device := fs.String("device", "cli", "this device's name")
		code := fs.String("code", "", "the code the agent shows")
		yes := fs.Bool("yes", false, "confirm without comparing codes (tests only)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := required(map[string]string{"--agent": *agent, "--person": *person, "--token": *token}); err != nil {
			return err
		}
		d, got, err := requester.Pair(ctx, requester.PairOptions{Dir: *dir, BaseURL: *base, Token: *token, Agent: *agent, Person: *person, DeviceName: *device,
			Confirm: func(c, fp string) bool {
				fmt.Fprintf(stderr, "pairing code: %s (agent key %s)\n", c, fp)
				switch {
				case *code != "":
					return c == strings.TrimSpace(*code)
				case *yes:
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
		return json.NewEncoder(stdout).Encode(map[string]any{"paired": true, "agent": *agent, "code": got})
	case "add-device":
		newDir := fs.String("new-state-dir", "", "where the new device keeps its state")
		device := fs.String("device", "", "the new device's name")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := required(map[string]string{"--agent": *agent, "--person": *person, "--new-state-dir": *newDir, "--device": *device}); err != nil {
			return err
		}
		d, err := requester.Open(*dir, *person, *agent)
		if err != nil {
			return err
		}
		defer d.Close()
		nd, err := d.AddDevice(ctx, *newDir, *device)
		if err != nil {
			return err
		}
		defer nd.Close()
		return json.NewEncoder(stdout).Encode(map[string]any{"added": *device, "stateDir": *newDir})
	case "send":
		conv := fs.String("conversation", "", "conversation id")
		id := fs.String("id", "", "message id (default: a fresh one; reuse it to resend)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		text := strings.Join(fs.Args(), " ")
		if err := required(map[string]string{"--agent": *agent, "--person": *person, "--conversation": *conv, "TEXT": text}); err != nil {
			return err
		}
		if *id == "" {
			*id = vp.NewIDs(nil).New("req")
		}
		d, err := requester.Open(*dir, *person, *agent)
		if err != nil {
			return err
		}
		defer d.Close()
		res, err := d.Send(ctx, *conv, *id, text)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"id": res.ID, "seq": res.Seq, "duplicate": res.Duplicate})
	case "wait":
		replyTo := fs.String("reply-to", "", "wait for a reply to this request")
		count := fs.Int("count", 1, "wait for this many replies")
		timeout := fs.Duration("timeout", 60*time.Second, "give up after")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := required(map[string]string{"--agent": *agent, "--person": *person}); err != nil {
			return err
		}
		d, err := requester.Open(*dir, *person, *agent)
		if err != nil {
			return err
		}
		defer d.Close()
		wctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		enc := json.NewEncoder(stdout)
		n := 0
		_, err = d.Wait(wctx, func(rs []requester.Reply) bool {
			for _, r := range rs[n:] {
				if *replyTo == "" || r.ReplyTo == *replyTo {
					_ = enc.Encode(r)
				}
			}
			n = len(rs)
			matched := 0
			for _, r := range rs {
				if *replyTo == "" || r.ReplyTo == *replyTo {
					matched++
				}
			}
			return matched >= *count
		})
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("no reply within %v", *timeout)
		}
		return err
	}
	fmt.Fprint(stderr, pacerelleUsage)
	return fmt.Errorf("unknown pacerelle command %q", args[0])
}

func required(vals map[string]string) error {
	for name, v := range vals {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s is required", name)
		}
	}
	return nil
}

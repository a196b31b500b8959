package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const errorsUsage = `vantagepeers errors — how the error monitor groups errors

  vantagepeers errors group [--function F] [--jsonl] [--final] [--state FILE]
                            [--data-dir D [--tenant T] --deployment NAME]

group reads one error message per line on stdin (with --jsonl, one JSON event per line:
{"function", "type", "message", "stack"}) and prints, for each line in order, its group key,
a tab, and the group's template (learned variables as <*>): the grouping the monitor applies
to these events in this order (algorithm ` + templates.Version + `), from an empty state.
When a line makes templates merge, "# merged KEY into KEY" goes to stderr: the older group
keeps its key. --final prints, once all lines are read, each line's group as it ends (merges
applied): the groups do not depend on the order of the lines.
  --function F  the function or route of plain lines (and of JSON events without one)
  --state FILE  start from the templates stored in FILE (JSON) when it exists, and write them
                back at the end.
  --deployment NAME  start from the templates the monitor learned for deployment NAME of
                tenant T (default "default") in the data dir; the data dir is only read (a copy
                of its database is opened), never written.
`

// errorsFlags are the flags of errors group.
type errorsFlags struct {
	function, statePath, deployment, tenant string
	jsonl, final                            bool
}

func errorsCommand() *command {
	var f errorsFlags
	return &command{Name: "errors", Page: errorsUsage,
		Synopsis: []string{"errors group [--function F] [--jsonl] [--final]"},
		Summary:  "how the error monitor groups messages read on stdin",
		Subs:     []string{"group"},
		Flags: func(fs *flag.FlagSet, _ string) {
			fs.StringVar(&f.function, "function", "", "the function or route of plain lines")
			fs.BoolVar(&f.jsonl, "jsonl", false, "read one JSON event per line")
			fs.BoolVar(&f.final, "final", false, "print each line's final group once all are read")
			fs.StringVar(&f.statePath, "state", "", "a JSON file of learned templates to start from and write back")
			fs.StringVar(&f.deployment, "deployment", "", "start from this deployment's learned templates in --data-dir")
			fs.StringVar(&f.tenant, "tenant", vp.DefaultTenant, "the deployment's tenant")
		},
		Run: func(ctx context.Context, e *env) error { return errorsGroup(ctx, e, f) },
	}
}

// errorsGroup runs errors group.
func errorsGroup(ctx context.Context, e *env, f errorsFlags) error {
	stdin, stdout, stderr := e.stdin, e.stdout, e.stderr
	if len(e.args) > 0 {
		return fmt.Errorf("errors group: unexpected argument %q", e.args[0])
	}
	if f.deployment != "" && f.statePath != "" {
		return errors.New("errors group: give --state or --deployment, not both")
	}
	l, err := loadLearner(f.statePath)
	if f.deployment != "" {
		l, err = deploymentLearner(ctx, e.dataDir, f.tenant, f.deployment)
	}
	if err != nil {
		return err
	}
	out := bufio.NewWriter(stdout)
	// With --final: each line's key and template at its arrival.
	var keys, arrived []string
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxGroupLine)
	for n := 1; sc.Scan(); n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		e := source.Event{Function: f.function, Message: sc.Text()}
		if f.jsonl {
			e = source.Event{}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				return fmt.Errorf("errors group: line %d: not a JSON event (%v)", n, err)
			}
			if e.Function == "" {
				e.Function = f.function
			}
		}
		r := l.Learn(e)
		for _, m := range r.Merged {
			fmt.Fprintf(stderr, "# merged %s into %s\n", m, r.Key)
		}
		if f.final {
			keys, arrived = append(keys, r.Key), append(arrived, r.Template)
			continue
		}
		fmt.Fprintf(out, "%s\t%s\n", r.Key, r.Template)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("errors group: a line is longer than %d bytes", maxGroupLine)
		}
		return fmt.Errorf("errors group: reading stdin: %w", err)
	}
	if f.final {
		texts := map[string]string{}
		for _, b := range l.State().Buckets {
			for _, t := range b.Templates {
				texts[t.Key] = t.Text()
			}
		}
		for i, k := range keys {
			k = l.Resolve(k)
			text, ok := texts[k]
			if !ok { // not learned (a cap): its own message
				text = arrived[i]
			}
			fmt.Fprintf(out, "%s\t%s\n", k, text)
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	return saveLearner(f.statePath, l)
}

// maxGroupLine bounds an input line: the parameteriser reads the first
// 2 KiB of a message, a JSON event carries its stack too.
const maxGroupLine = 1 << 20

func loadLearner(path string) (*templates.Learner, error) {
	l, err := templates.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("errors group: --state %s: %w", path, err)
	}
	return l, nil
}

func saveLearner(path string, l *templates.Learner) error {
	if err := l.SaveFile(path); err != nil {
		return fmt.Errorf("errors group: --state: %w", err)
	}
	return nil
}

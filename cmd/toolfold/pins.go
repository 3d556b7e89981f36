package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolfold/toolfold/internal/assemble"
	"github.com/toolfold/toolfold/internal/trust"
)

// runPins shows the trust state (`toolfold pins`) or approves held items
// (`toolfold pins approve SERVER [ITEM...]`). Both read the upstreams'
// cached lists, start nothing, and judge them against the lock, so what they
// show is what serve would hold.
func runPins(ctx context.Context, e env, args []string) error {
	approve := len(args) > 0 && args[0] == "approve"
	if approve {
		args = args[1:]
	}
	synopsis := "[--config F] [--json] | pins approve [--config F] SERVER [ITEM...]"
	fs := newFlags(e, "pins", synopsis)
	var d deployment
	d.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if !approve && len(rest) > 0 && rest[0] == "approve" { // pins --config F approve …
		approve, rest = true, rest[1:]
	}
	if d.demo {
		return usageError{"the demo folds no MCP servers, so nothing is pinned"}
	}
	if !approve && len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q; to approve, run toolfold pins approve SERVER [ITEM...]", rest[0])}
	}
	if approve && len(rest) == 0 {
		return usageError{"approve needs the server: toolfold pins approve SERVER [ITEM...] (all its held items when no ITEM)"}
	}
	d.inspecting = true
	p, _, err := build(ctx, e, d, nil, noDiscovery)
	if err != nil {
		return err
	}
	defer p.Upstreams.Close()
	st := p.Trust()
	if st == nil {
		return fmt.Errorf("nothing is pinned: the config folds no MCP servers")
	}
	if approve {
		apps, err := p.ApprovePins(rest[0], rest[1:], approver())
		if err != nil {
			return err
		}
		for _, a := range apps {
			fmt.Fprintf(e.stdout, "approved %s %s (%s)\n", a.Server, a.Item, a.NewDigest)
		}
		fmt.Fprintf(e.stdout, "%s is updated; commit it, and a running toolfold serves the approved items now.\n", st.LockFile)
		return nil
	}
	if *asJSON {
		return writePinsJSON(e.stdout, st)
	}
	writePins(e.stdout, st)
	return nil
}

// approver names who approves in the audit line: the OS user.
func approver() string {
	for _, k := range []string{"USER", "USERNAME", "LOGNAME"} {
		if v := os.Getenv(k); v != "" {
			return "cli:" + v
		}
	}
	return "cli"
}

// pinsOf is the report of a trust state.
func pinsOf(st *assemble.TrustState) trust.Report {
	return trust.NewReport(st.LockFile, st.ReadOnly, st.Lock, st.Findings)
}

func writePinsJSON(w io.Writer, st *assemble.TrustState) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(pinsOf(st))
}

func writePins(w io.Writer, st *assemble.TrustState) {
	r := pinsOf(st)
	mode := ""
	if r.ReadOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(w, "lock file: %s%s\n", r.LockFile, mode)
	if st.Unreadable != nil {
		fmt.Fprintf(w, "the lock file cannot be read, so every upstream item is held: %v\n", st.Unreadable)
	}
	held := 0
	for _, s := range r.Servers {
		fmt.Fprintf(w, "\n%s: %s, %d pinned, %d held\n", s.Name, s.State, s.Pinned, len(s.Held))
		for _, h := range s.Held {
			held++
			what := "new"
			if h.OldDigest != "" {
				what = "changed: " + strings.Join(h.Changed, ", ")
			}
			fmt.Fprintf(w, "  held %s (%s)\n    approve: %s\n", h.Item, what, h.Approve)
			for _, line := range strings.Split(strings.TrimRight(h.Diff, "\n"), "\n") {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
	if len(r.Findings) > 0 {
		fmt.Fprintf(w, "\nscan findings:\n")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	fmt.Fprintf(w, "\n%d server(s), %d held item(s), %d finding(s).\n", len(r.Servers), held, len(r.Findings))
}

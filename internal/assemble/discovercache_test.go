package assemble

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/cmdtool"
)

// TestDiscoveryWithUnreadPagesIsNotCached: a discovery that lost help pages
// to their timeout serves this start but is not kept, so the next start
// reads the program's help again; a complete one is kept and the next
// start does not run the program. The complete case is the control.
func TestDiscoveryWithUnreadPagesIsNotCached(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unread     []string
		wantRerun  bool
		wantWarned bool
	}{
		{"complete", nil, false, false},
		{"a page timed out", []string{"sh sub --help"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			opts := CommandOptions{CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil))}
			p := cmdtool.Program{Name: "demo", Command: "sh", Discover: cmdtool.DiscoverHelp}
			runs := 0
			discover := func(context.Context, cmdtool.Program) (cmdtool.Discovery, error) {
				runs++
				return cmdtool.Discovery{Actions: []cmdtool.Action{{Name: "sub"}}, Unread: tc.unread}, nil
			}
			for range 2 {
				actions, err := discoverCachedWith(context.Background(), p, opts, discover)
				if err != nil {
					t.Fatal(err)
				}
				if len(actions) != 1 || actions[0].Name != "sub" {
					t.Fatalf("actions %+v, want the one discovered", actions)
				}
			}
			if rerun := runs == 2; rerun != tc.wantRerun {
				t.Fatalf("help read %d times in two starts; want a second read: %v", runs, tc.wantRerun)
			}
			if warned := strings.Contains(log.String(), "not cached"); warned != tc.wantWarned {
				t.Fatalf("warned %v, want %v; log:\n%s", warned, tc.wantWarned, log.String())
			}
		})
	}
}

package upstream

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/logtest"
	"github.com/toolfold/toolfold/internal/upstream/groupsfixture"
)

// A tool's _meta may name groups the server's own groups/list lacks (an
// operator's "ops", a path-like "../etc"): such memberships must not leave
// the Manager, whatever shape the server serves, so the catalog can neither
// put the tool in an operator's group nor make a group of that name.
func TestUnbackedMembershipsAreDropped(t *testing.T) {
	intrude := []string{"ops", "nonexistent", "../etc", "issues"}
	tests := []struct {
		name string
		mode groupsfixture.Mode
		want []string // what the intruder keeps
	}{
		{"grouping", groupsfixture.Grouping, []string{"issues"}},
		{"skills", groupsfixture.Skills, []string{"issues"}},
		{"no extension", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs logtest.Buffer
			fx := groupsfixture.NewWith(groupsfixture.Options{Mode: tc.mode, Intrude: intrude})
			m := newTestManager(t, map[string]config.ServerConfig{"fx": {Command: "unused"}},
				&Options{dial: fixtureDialer(fx), Logger: logs.Logger(slog.LevelInfo)})
			tools, err := m.Tools(context.Background(), "fx")
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tool := range tools {
				got := groupsext.MetaGroups(tool.Meta)
				for _, g := range got {
					if g == "ops" || g == "nonexistent" || g == "../etc" {
						t.Errorf("tool %q keeps the undeclared group %q in its _meta", tool.Name, g)
					}
				}
				if tool.Name == "intruder" {
					found = true
					if strings.Join(got, ",") != strings.Join(tc.want, ",") {
						t.Errorf("intruder's groups = %q, want %q", got, tc.want)
					}
				}
			}
			if !found {
				t.Fatal("the intruder tool is not listed")
			}
			if !strings.Contains(logs.String(), `group=../etc`) {
				t.Errorf("no warning names the dropped group; logs:\n%s", logs.String())
			}
		})
	}
}

// A server may quote its config's secrets back in anything it describes;
// what the Manager hands on (tools, groups, skill bodies) and what it
// writes to its cache must hold them masked.
func TestDefinitionsMaskQuotedSecrets(t *testing.T) {
	const token = "tok-quoted-<&>-77231"
	dir := t.TempDir()
	fx := groupsfixture.NewWith(groupsfixture.Options{Mode: groupsfixture.Grouping | groupsfixture.Skills, Quote: token})
	cfg := map[string]config.ServerConfig{"fx": {Command: "unused", Expanded: config.SecretMap{"FX_TOKEN": token}}}
	m := newTestManager(t, cfg, &Options{dial: fixtureDialer(fx), CacheDir: dir})
	tools, err := m.Tools(context.Background(), "fx")
	if err != nil {
		t.Fatal(err)
	}
	groups, _ := m.CachedGroups("fx")
	for what, v := range map[string]any{"tools": tools, "groups": groups} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		// Decoded, so an escaped secret ("\u003c") is found too.
		var text any
		_ = json.Unmarshal(data, &text)
		plain, _ := json.Marshal(text)
		s := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(plain))
		if strings.Contains(s, token) {
			t.Errorf("%s hold the secret unmasked: %s", what, s)
		}
		if !strings.Contains(s, "***") {
			t.Errorf("%s show no mask: the fixture's quote did not reach them: %s", what, s)
		}
	}
	if len(tools) == 0 || tools[0].InputSchema == nil {
		t.Fatal("no schema")
	}
	if _, ok := tools[0].InputSchema.(json.RawMessage); !ok {
		t.Errorf("a masked schema is %T, want json.RawMessage like every other", tools[0].InputSchema)
	}
	assertNoSecretInDir(t, dir, token)
}

// assertNoSecretInDir fails if any file under dir holds secret.
func assertNoSecretInDir(t *testing.T, dir, secret string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("no cache file under %s", dir)
	}
}

package e2e

import (
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustHoldsAGroupAddedMidSession runs the binary under the default
// trust policy against the groups fixture, which adds a group and a skill
// "wiki" mid-session: toolfold holds them (enable_tools cannot reach
// fx.wiki), `toolfold pins` shows them with the approve command, `toolfold
// pins approve fx` re-pins, and the running gateway picks the lock up
// without a restart: the group serves.
func TestTrustHoldsAGroupAddedMidSession(t *testing.T) {
	cache := t.TempDir()
	bin, err := groupsFixtureBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"fx": map[string]any{
		"command": bin, "env": map[string]string{"GROUPS_FIXTURE_MODE": "grouping,skills"}}}})
	s := stdioSession2025(t, "e2e-go", []string{"TOOLFOLD_CACHE_DIR=" + cache}, "--config", cfg, "--mode", "groups")
	s.mustCall("enable_tools", map[string]any{"groups": []string{"fx"}})
	s.waitChanged()
	lock := filepath.Join(filepath.Dir(cfg), "toolfold.lock")
	if b, err := os.ReadFile(lock); err != nil || !strings.Contains(string(b), `"skill:issues"`) {
		t.Fatalf("serve did not pin the fixture's groups in %s: %v\n%s", lock, err, b)
	}

	if got := s.mustCall("fx__open_wiki", map[string]any{}); got != "wiki opened" {
		t.Fatalf("fx__open_wiki = %q", got)
	}
	// serve writes the hold into the lock when the change lands; from
	// then on enable_tools cannot find the group.
	waitForText(t, lock, `"skill:wiki"`)
	if isErr, text := s.call("enable_tools", map[string]any{"groups": []string{"fx.wiki"}}); !isErr {
		t.Fatalf("enable_tools reached the held group fx.wiki: %s", text)
	}

	pins := func(args ...string) string {
		cmd := exec.Command(binary, append([]string{"pins", "--config", cfg}, args...)...)
		cmd.Env = append(os.Environ(), "TOOLFOLD_CACHE_DIR="+cache)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("toolfold pins %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := pins()
	for _, want := range []string{"fx: held", "held skill:wiki (new)", "approve: toolfold pins approve fx skill:wiki"} {
		if !strings.Contains(out, want) {
			t.Errorf("toolfold pins lacks %q:\n%s", want, out)
		}
	}
	if out := pins("approve", "fx"); !strings.Contains(out, "approved fx skill:wiki") {
		t.Errorf("toolfold pins approve fx:\n%s", out)
	}
	// The running gateway reads the approval and rebuilds: fx.wiki serves.
	// Nothing tells this client when (its list need not change), so it
	// asks again on each list change or every 100ms, up to a minute.
	deadline := time.After(time.Minute)
	for {
		isErr, text := s.call("enable_tools", map[string]any{"groups": []string{"fx.wiki"}})
		if !isErr {
			break
		}
		select {
		case <-s.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the approved group never served: %s", text)
		}
	}
}

// waitForText waits, on the file system's events, until the file at path holds
// substr, for at most a minute.
func waitForText(t *testing.T, path, substr string) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), substr) {
			return
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			t.Fatal(err)
		case <-deadline:
			b, _ := os.ReadFile(path)
			t.Fatalf("%s never held %s:\n%s", path, substr, b)
		}
	}
}

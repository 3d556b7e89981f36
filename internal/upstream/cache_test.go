package upstream

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/logtest"
)

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestCacheLetsALaterRunKnowToolsWithoutStarting(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(t.TempDir(), "starts")
	servers := map[string]config.ServerConfig{"fx": fixture(t, "serve", map[string]string{"FIXTURE_START_LOG": starts})}

	first := newTestManager(t, servers, &Options{CacheDir: dir})
	want, err := first.Tools(context.Background(), "fx")
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	if n := countLines(t, starts); n != 1 {
		t.Fatalf("first run started the server %d times, want 1", n)
	}

	second := newTestManager(t, servers, &Options{CacheDir: dir})
	if st := statusOf(second, "fx"); st.State != StateIdle || !st.ToolsCached || st.Tools != len(want) {
		t.Errorf("second run's status: %+v", st)
	}
	cached, ok := second.CachedTools("fx")
	if !ok || len(cached) != len(want) {
		t.Fatalf("CachedTools = %d tools, %v; want %d", len(cached), ok, len(want))
	}
	got, err := second.Tools(context.Background(), "fx")
	if err != nil || len(got) != len(want) {
		t.Fatalf("Tools = %d tools, %v", len(got), err)
	}
	for name, err := range second.Discover(context.Background()) {
		if err != nil {
			t.Errorf("Discover %s: %v", name, err)
		}
	}
	if info, ok := second.ServerInfo("fx"); !ok || info.Instructions != "A test server." {
		t.Errorf("cached ServerInfo = %+v, %v", info, ok)
	}
	if n := countLines(t, starts); n != 1 {
		t.Errorf("the second run started the server (%d starts in all)", n)
	}
	// A call does start it, and refreshes the cache.
	mustCall(t, second, "fx", "pid", nil)
	if n := countLines(t, starts); n != 2 {
		t.Errorf("a call did not start the server (%d starts)", n)
	}
	if st := statusOf(second, "fx"); st.ToolsCached {
		t.Errorf("after a start the list is still marked cached")
	}
}

func TestCacheKey(t *testing.T) {
	base := config.ServerConfig{
		Name: "gh", Command: "npx", Args: []string{"-y", "server-github"}, Cwd: "/tmp",
		Env: config.SecretMap{"TOKEN": "one"}, Transport: config.TransportStdio,
	}
	remote := config.ServerConfig{URL: "https://example.com/mcp", Headers: config.SecretMap{"Authorization": "Bearer one"}, Transport: config.TransportHTTP}
	tests := []struct {
		name   string
		from   config.ServerConfig
		change func(*config.ServerConfig)
		same   bool
	}{
		{"command", base, func(c *config.ServerConfig) { c.Command = "bunx" }, false},
		{"an argument", base, func(c *config.ServerConfig) { c.Args = []string{"-y", "server-gitlab"} }, false},
		{"arguments split differently", base, func(c *config.ServerConfig) { c.Args = []string{"-y server-github"} }, false},
		{"an env value", base, func(c *config.ServerConfig) { c.Env = config.SecretMap{"TOKEN": "two"} }, false},
		{"an env name", base, func(c *config.ServerConfig) { c.Env = config.SecretMap{"TOKEN2": "one"} }, false},
		{"cwd", base, func(c *config.ServerConfig) { c.Cwd = "/" }, false},
		{"url", remote, func(c *config.ServerConfig) { c.URL = "https://example.com/other" }, false},
		{"a header value", remote, func(c *config.ServerConfig) { c.Headers = config.SecretMap{"Authorization": "Bearer two"} }, false},
		{"transport", remote, func(c *config.ServerConfig) { c.Transport = config.TransportSSE }, false},
		{"include and exclude", base, func(c *config.ServerConfig) { c.Include, c.Exclude = []string{"a*"}, []string{"b"} }, true},
		{"timeout, lazy, prefix, name", base, func(c *config.ServerConfig) {
			p := "x"
			c.Timeout, c.Lazy, c.Prefix, c.Name = config.Duration(time.Second), false, &p, "other"
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := tt.from
			changed.Args = append([]string(nil), tt.from.Args...)
			tt.change(&changed)
			if same := cacheKey(tt.from) == cacheKey(changed); same != tt.same {
				t.Errorf("changing %s: same key = %v, want %v", tt.name, same, tt.same)
			}
		})
	}
}

func TestCorruptCacheIsIgnored(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, "serve", nil)
	cfg.Name = "fx"
	path := diskCache{dir: dir}.path("fx", cacheKey(cfg))
	if err := os.WriteFile(path, []byte(`{"format": 1, "tools": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	m := newTestManager(t, map[string]config.ServerConfig{"fx": cfg}, &Options{CacheDir: dir, Logger: logs.Logger(slog.LevelInfo)})
	if _, ok := m.CachedTools("fx"); ok {
		t.Fatal("a corrupt cache was used")
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "is corrupt") {
		t.Errorf("no warning about the corrupt cache; logs:\n%s", logs.String())
	}
	tools, err := m.Tools(context.Background(), "fx")
	if err != nil || len(tools) == 0 {
		t.Fatalf("Tools: %d, %v", len(tools), err)
	}
	// The refresh after the start replaced the corrupt file.
	if e, err := (diskCache{dir: dir}).load("fx", cacheKey(cfg)); err != nil || e == nil || len(e.Tools) != len(tools) {
		t.Errorf("cache after the refresh: %v, %v", e, err)
	}
}

func TestCacheHoldsNoSecrets(t *testing.T) {
	dir := t.TempDir()
	const secret = "s3cr3t-token-value"
	cfg := fixture(t, "serve", map[string]string{"API_TOKEN": secret})
	cfg.Args = []string{} // the fixture ignores args
	m := newTestManager(t, map[string]config.ServerConfig{"fx": cfg}, &Options{CacheDir: dir})
	if _, err := m.Tools(context.Background(), "fx"); err != nil {
		t.Fatal(err)
	}
	// The server did get the secret.
	if got := mustCall(t, m, "fx", "env", map[string]any{"name": "API_TOKEN"}); got != secret {
		t.Fatalf("the server saw API_TOKEN=%q", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "fx-") {
		t.Fatalf("cache dir holds %v, want one fx-<key>.json", files)
	}
	b, _ := os.ReadFile(files[0])
	if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("API_TOKEN")) {
		t.Errorf("the cache file contains the env var or its value:\n%s", b)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("cache file mode %v is readable by others", fi.Mode())
	}
}

func TestFileSafe(t *testing.T) {
	for in, want := range map[string]string{
		"github":        "github",
		"My Server":     "My_Server",
		"../../etc":     "_.._.._etc",
		".hidden":       "_.hidden",
		"":              "_",
		"a/b\\c:d":      "a_b_c_d",
		"ünïcode-name_": "__n__code-name_",
	} {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

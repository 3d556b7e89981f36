package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// FuzzLoad feeds arbitrary bytes to the parser, as JSON and as YAML. It must never
// panic, and must return exactly one of: a config (with at most warnings), or
// problems that include an error. Every problem must be printable and located.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"testdata/good", "testdata/bad"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, file := range files {
			if strings.HasSuffix(file, ".txt") {
				continue
			}
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data, strings.HasSuffix(file, ".yaml"))
			}
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"${A:-${B:-${C}}}","args":["$${x}"]}}}`), false)
	f.Add([]byte("a: &a [*a]\n"), true)
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, asYAML bool) {
		name := "fuzz.json"
		if asYAML {
			name = "fuzz.yaml"
		}
		env := MapEnv(map[string]string{"A": "a", "HOME": "/h"})
		noFiles := func(string) ([]byte, error) { return nil, os.ErrNotExist }
		// A hang is a bug too, but the fuzzer only records inputs that fail or
		// crash: so crash, with every stack, if one input takes far too long.
		watchdog := time.AfterFunc(10*time.Second, func() {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			os.Stderr.Write(buf[:n])
			os.Exit(3)
		})
		defer watchdog.Stop()
		cfg, diags := Parse(name, data, Options{LookupEnv: env, ReadFile: noFiles})
		if (cfg == nil) != diags.HasErrors() {
			t.Fatalf("config=%v but HasErrors=%v:\n%s", cfg != nil, diags.HasErrors(), diags)
		}
		for _, p := range diags {
			if p.Message == "" || p.File != name {
				t.Fatalf("unlocated or empty problem: %#v", p)
			}
			_ = p.String()
		}
		if cfg != nil {
			_ = cfg.Redacted()
			_ = cfg.Globs()
			_, _ = cfg.ResolveGroupStates(nil, Overrides{}, env)
		}
	})
}

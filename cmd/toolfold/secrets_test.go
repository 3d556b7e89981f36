package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallShowsNoCommandSecret: toolfold call prints a failed command's
// result, stderr quoted back included, with its ${VAR} values masked.
func TestCallShowsNoCommandSecret(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "toolfold.json", `{"commands": {"leak": {"command": "sh", "env": {"TOKEN": "${LEAK_SECRET}"},
		"actions": {"fail": {"argv": ["-c", "echo \"the token $TOKEN was rejected\" >&2; exit 1"]}}}}}`)
	secret := "leak-secret-5d2c71"
	code, stdout, stderr := runCLI(t, dir, map[string]string{"LEAK_SECRET": secret}, "call", "leak__fail")
	if code != 1 || !strings.Contains(stdout, "the token *** was rejected") {
		t.Errorf("call: exit %d, want 1 with the masked stderr\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Errorf("toolfold call printed the secret:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
}

// TestCacheHoldsNoSecretFromInstructions: a server whose instructions quote
// the token in its env has its catalog cached on disk with the token masked.
func TestCacheHoldsNoSecretFromInstructions(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	secret := "leak-secret-5d2c71"
	writeConfigJSON(t, dir, "toolfold.json", map[string]any{"mcpServers": map[string]any{"leaky": map[string]any{
		"command": testBinary(t), "env": map[string]string{"TOOLFOLD_TEST_HELPER": "mcp", "TOKEN": "${LEAK_SECRET}"}}}})
	t.Chdir(dir)
	var out, errb bytes.Buffer
	environ := map[string]string{"TOOLFOLD_CACHE_DIR": cache, "LEAK_SECRET": secret}
	e := env{stdin: io.NopCloser(strings.NewReader("")), stdout: nopCloser{&out}, stderr: &errb,
		lookupEnv: func(k string) (string, bool) { v, ok := environ[k]; return v, ok }}
	if code := run(context.Background(), []string{"tools"}, e); code != 0 || !strings.Contains(out.String(), "leaky__ping") {
		t.Fatalf("tools: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	var files []string
	err := filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("the cache file %s holds the secret:\n%s", path, data)
		}
		// The server's catalog file keeps its instructions; the trust
		// and derived-group memos beside it keep only digests.
		if strings.HasPrefix(d.Name(), "leaky-") {
			files = append(files, path)
			if !strings.Contains(string(data), "Log in with the token *** if asked.") {
				t.Errorf("the cache file %s lacks the masked instructions:\n%s", path, data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("the server's catalog was not cached, so nothing was checked")
	}
}

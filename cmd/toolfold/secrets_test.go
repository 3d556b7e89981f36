package main

import (
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

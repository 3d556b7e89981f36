package main

import (
	"regexp"
	"testing"
)

// TestVersionLines: one fact a line, so scripts and bug reports can read
// them; values set at release (-ldflags -X) win over what Go recorded.
func TestVersionLines(t *testing.T) {
	check := func(t *testing.T, want map[string]string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", nil, "version")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for key, value := range want {
			if !regexp.MustCompile(`(?m)^` + key + `: ` + value + `$`).MatchString(stdout) {
				t.Errorf("no %q line matching %q in:\n%s", key, value, stdout)
			}
		}
	}
	t.Run("as built by go test", func(t *testing.T) {
		check(t, map[string]string{
			"version": `\S+`, "commit": `\S+.*`, "date": `\S+`,
			"MCP protocol versions": `.*2025-11-25.*`,
		})
	})
	t.Run("release values", func(t *testing.T) {
		old := [3]string{buildVersion, buildCommit, buildDate}
		t.Cleanup(func() { buildVersion, buildCommit, buildDate = old[0], old[1], old[2] })
		buildVersion, buildCommit, buildDate = "v1.2.3", "0123abc", "2026-01-02T03:04:05Z"
		check(t, map[string]string{"version": `v1\.2\.3`, "commit": `0123abc`, "date": `2026-01-02T03:04:05Z`})
	})
}

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleConfigsAreValid keeps the configs users start from working.
func TestExampleConfigsAreValid(t *testing.T) {
	files, err := filepath.Glob("../examples/configs/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example configs found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			// check looks for the programs a config runs.
			if strings.Contains(readFile(t, f), `"command": "npx"`) {
				if _, err := exec.LookPath("npx"); err != nil {
					t.Skip("npx is not installed")
				}
			}
			cmd := exec.Command(binary, "check", "--config", f)
			cmd.Env = append(os.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir(), "PROJECT_DIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "is valid") {
				t.Errorf("toolfold check %s: %v\n%s", f, err, out)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadOnlyExampleExposesNoMutation: the git example is described as
// read-only, so every tool it exposes must be read-only, and the
// subcommands that change a repository's remotes or branches must not be
// there at all.
func TestReadOnlyExampleExposesNoMutation(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	f := "../examples/configs/git.json"
	if !strings.Contains(readFile(t, "../examples/configs/README.md"), "read-only") {
		t.Fatal("the examples README no longer says which configs are read-only; update this test")
	}
	cmd := exec.Command(binary, "tools", "--json", "--config", f)
	cmd.Env = append(os.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir(), "PROJECT_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolfold tools: %v\n%s", err, out)
	}
	var tools []struct {
		Name        string `json:"name"`
		Annotations struct {
			ReadOnly bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(out, &tools); err != nil || len(tools) == 0 {
		t.Fatalf("toolfold tools --json: %v\n%s", err, out)
	}
	mutating := []string{"remote_add", "remote_remove", "remote_rename", "remote_set-url", "remote_prune", "remote_update", "branch", "push", "commit", "reset"}
	for _, tool := range tools {
		if !tool.Annotations.ReadOnly {
			t.Errorf("%s is not read-only", tool.Name)
		}
		for _, m := range mutating {
			if strings.HasSuffix(tool.Name, "__"+m) {
				t.Errorf("%s changes the repository", tool.Name)
			}
		}
	}
}

package e2e

import (
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
			cmd := exec.Command(binary, "check", "--config", f)
			cmd.Env = append(os.Environ(), "TOOLFOLD_CACHE_DIR="+t.TempDir(), "PROJECT_DIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "is valid") {
				t.Errorf("toolfold check %s: %v\n%s", f, err, out)
			}
		})
	}
}

package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden .txt files of testdata/bad from the current output")

// goldenEnv is the environment every golden config is loaded with.
var goldenEnv = MapEnv(map[string]string{"HOME": "/home/user", "PROJECT_DIR": "/src/project"})

// TestBadConfigs is the table of broken configs and the exact text a user sees
// (issue 3): every testdata/bad/NAME.json or .yaml sits beside NAME.txt holding
// the problems as `toolfold check` prints them. Run with -update after an
// intended change to a message, and read the diff.
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, ".txt") {
			continue
		}
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, diags := Parse(name, data, Options{LookupEnv: goldenEnv})
			if len(diags) == 0 {
				t.Fatal("no problems found in a config under testdata/bad")
			}
			if (cfg == nil) != diags.HasErrors() {
				t.Errorf("config returned = %v, but HasErrors = %v: a config must come back exactly when there are no errors", cfg != nil, diags.HasErrors())
			}
			got := diags.String() + "\n"
			golden := strings.TrimSuffix(file, filepath.Ext(file)) + ".txt"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestBadConfigs -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("problems differ from %s\n--- got:\n%s--- want:\n%s", golden, got, want)
			}
		})
	}
}

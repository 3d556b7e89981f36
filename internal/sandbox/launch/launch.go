// Package launch is the sandbox's launcher: the code that runs inside a
// re-executed toolfold, applies a server's sandbox to itself and execve's
// the server. It does its work in init, before the rest of the binary
// has been initialised, so that a sandboxed start does not pay for
// toolfold's package initialisation (OpenTelemetry, gRPC, the schema
// and template packages: tens of milliseconds per start).
//
// Go initialises packages in dependency order and, among those ready,
// in the order of their import paths (the language spec, since Go 1.21):
// this package depends on the standard library, x/sys and go-landlock
// alone, so it runs before every heavy package above it. Keep it so:
// an import added here is paid on every sandboxed start
// (TestLaunchSkipsHeavyInit in internal/sandbox guards it).
package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// PolicyEnv carries the policy to the launcher, which removes it before
// the server runs, so the server (a nested toolfold included) never sees
// it.
const PolicyEnv = "TOOLFOLD_SANDBOX_POLICY"

// Policy is a sandbox block resolved for one start of one server: the
// preset's grants added, "~" expanded, the program to run found. It is
// what the launcher enforces, so it travels as JSON.
type Policy struct {
	// Server names the server in messages.
	Server string `json:"server"`
	// Program is the absolute path of the server's program.
	Program string `json:"program"`
	// Read, Write and Exec are the paths granted, each with what is
	// under it.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	Exec  []string `json:"exec,omitempty"`
	// AllNetwork leaves TCP unrestricted; else the server may connect
	// to Ports only and bind none.
	AllNetwork bool  `json:"allNetwork,omitempty"`
	Ports      []int `json:"ports,omitempty"`
	// Limits; zero is none.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	Processes   int   `json:"processes,omitempty"`
	OpenFiles   int   `json:"openFiles,omitempty"`
	CPUSeconds  int64 `json:"cpuSeconds,omitempty"`
	// Cgroup is the cgroup directory the launcher joins, for Processes.
	Cgroup string `json:"cgroup,omitempty"`
	// BestEffort applies what the kernel offers (required: false).
	BestEffort bool `json:"bestEffort,omitempty"`
}

func init() {
	raw, ok := os.LookupEnv(PolicyEnv)
	if !ok {
		return
	}
	var p Policy
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		fail(fmt.Errorf("reading the policy: %w", err))
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, PolicyEnv+"=") {
			env = append(env, kv)
		}
	}
	fail(enforceAndExec(&p, os.Args, env))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "toolfold sandbox: %v\n", err)
	os.Exit(126)
}

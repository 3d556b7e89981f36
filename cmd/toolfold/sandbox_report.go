package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/sandbox"
)

// sandboxReport prints, for toolfold check, the rules each stdio server
// will run under, what of them this machine cannot enforce, and every
// stdio server that runs with the user's full rights.
func sandboxReport(w io.Writer, cfg *config.Config, home string) {
	var open []string
	var lines []string
	for _, name := range sortedNames(cfg.MCPServers) {
		s := cfg.MCPServers[name]
		if s.Transport != config.TransportStdio || s.Disabled {
			continue
		}
		if s.Sandbox == nil {
			open = append(open, name)
			continue
		}
		p, err := sandbox.Resolve(name, s.Sandbox, s.Command, home)
		if err != nil {
			lines = append(lines, fmt.Sprintf("  %s: cannot resolve its sandbox: %v", name, err))
			continue
		}
		preset := s.Sandbox.Preset
		if preset == "" {
			preset = "none"
		}
		lines = append(lines, fmt.Sprintf("  %s (preset %s):", name, preset))
		for _, l := range sandbox.Describe(p) {
			lines = append(lines, "    "+l)
		}
		for _, m := range sandbox.Unenforceable(p) {
			verdict := "will not start"
			if !s.Sandbox.IsRequired() {
				verdict = "not enforced"
			}
			lines = append(lines, fmt.Sprintf("    %s: %s", verdict, m))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "Sandboxes:")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
	if len(open) > 0 {
		fmt.Fprintf(w, "Without a sandbox (they run with your full rights; add a \"sandbox\" block, see docs/sandbox.md): %s\n", strings.Join(open, ", "))
	}
}

func sortedNames(m map[string]config.ServerConfig) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/sandbox/launch"
)

// Policy is a sandbox block resolved for one start of one server; the
// launcher enforces it.
type Policy = launch.Policy

// Resolve turns a server's sandbox block into the policy of one start.
// program is the command as configured; lookPath finds it the way the
// start will. home is the user's home directory ("" if unknown).
func Resolve(name string, sb *config.SandboxConfig, program string, home string) (*Policy, error) {
	path, err := exec.LookPath(program)
	if err != nil {
		return nil, fmt.Errorf("sandbox of %q: finding its program %q: %w", name, program, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	p := &Policy{
		Server:      name,
		Program:     path,
		AllNetwork:  sb.Network.All,
		Ports:       slices.Clone(sb.Network.Ports),
		MemoryBytes: int64(sb.Limits.Memory),
		Processes:   sb.Limits.Processes,
		OpenFiles:   sb.Limits.OpenFiles,
		CPUSeconds:  int64(sb.Limits.CPU.Std().Seconds()),
		BestEffort:  !sb.IsRequired(),
	}
	expand := func(list []string) ([]string, error) {
		out := make([]string, 0, len(list))
		for _, s := range list {
			if s == "~" || strings.HasPrefix(s, "~/") {
				if home == "" {
					return nil, fmt.Errorf("sandbox of %q: %q starts with ~ but HOME is not set; write the path in full", name, s)
				}
				s = filepath.Join(home, strings.TrimPrefix(s, "~"))
			}
			out = append(out, filepath.Clean(s))
		}
		return out, nil
	}
	if p.Read, err = expand(sb.Read); err != nil {
		return nil, err
	}
	if p.Write, err = expand(sb.Write); err != nil {
		return nil, err
	}
	if p.Exec, err = expand(sb.Exec); err != nil {
		return nil, err
	}
	for _, lists := range [][]string{p.Read, p.Write, p.Exec} {
		for _, s := range lists {
			if _, err := os.Stat(s); err != nil {
				return nil, fmt.Errorf("sandbox of %q: granted path %s: %w; create it or take it out of the sandbox block", name, s, err)
			}
		}
	}
	// The program itself always runs: the sandbox is for what it does.
	p.Exec = append(p.Exec, path)
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		p.Exec = append(p.Exec, real)
	}
	pr := presetGrants(sb.Preset, path, home)
	p.Read = append(p.Read, existing(pr.read)...)
	p.Write = append(p.Write, existing(pr.write)...)
	p.Exec = append(p.Exec, existing(pr.exec)...)
	p.Read, p.Write, p.Exec = dedupe(p.Read), dedupe(p.Write), dedupe(p.Exec)
	return p, nil
}

func existing(paths []string) []string {
	out := paths[:0:0]
	for _, s := range paths {
		if _, err := os.Stat(s); err == nil {
			out = append(out, s)
		}
	}
	return out
}

func dedupe(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }

// Describe is the policy in a few lines, for toolfold check and the
// dashboard.
func Describe(p *Policy) []string {
	net := "no TCP"
	switch {
	case p.AllNetwork:
		net = "any TCP"
	case len(p.Ports) > 0:
		net = "TCP connect to port " + strings.Trim(fmt.Sprint(p.Ports), "[]")
	}
	lines := []string{
		"read:  " + strings.Join(p.Read, " "),
		"write: " + strings.Join(p.Write, " "),
		"exec:  " + strings.Join(p.Exec, " "),
		"network: " + net,
	}
	var limits []string
	if p.MemoryBytes > 0 {
		limits = append(limits, "memory "+config.ByteSize(p.MemoryBytes).String())
	}
	if p.Processes > 0 {
		limits = append(limits, fmt.Sprintf("processes %d", p.Processes))
	}
	if p.OpenFiles > 0 {
		limits = append(limits, fmt.Sprintf("openFiles %d", p.OpenFiles))
	}
	if p.CPUSeconds > 0 {
		limits = append(limits, fmt.Sprintf("cpu %ds", p.CPUSeconds))
	}
	if len(limits) > 0 {
		lines = append(lines, "limits: "+strings.Join(limits, ", "))
	}
	return lines
}

// Summary is the policy on one line, for the log line of a start.
func Summary(p *Policy) string { return strings.Join(Describe(p), "; ") }

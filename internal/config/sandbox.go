package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// SandboxConfig is the kernel sandbox a stdio server runs in (the
// internal/sandbox package enforces it): what it may read, write and
// execute, which TCP ports it may connect to, and its resource limits.
// It applies to the server's whole process tree from its first
// instruction, on every start.
type SandboxConfig struct {
	// Preset names the grants a runtime needs to start at all: "node",
	// "python", "go" or "none" (nothing beyond the lists below). Empty
	// means "none".
	Preset string `json:"preset,omitempty"`
	// Read are paths (files or directories, with what is under them) the
	// server may read. "~" at the start means the user's home.
	Read []string `json:"read,omitempty"`
	// Write are paths the server may read and write, create and remove in.
	Write []string `json:"write,omitempty"`
	// Exec are paths of programs (or directories of them) the server may
	// execute, besides its own command.
	Exec []string `json:"exec,omitempty"`
	// Network is false (no TCP connect or bind), true (any), or a list
	// of TCP ports the server may connect to.
	Network SandboxNetwork `json:"network"`
	// Limits are the server's resource limits.
	Limits SandboxLimits `json:"limits"`
	// Required refuses to start the server where the kernel cannot
	// enforce the block; false starts it anyway, with a warning naming
	// what is not enforced. nil means true.
	Required *bool `json:"required,omitempty"`
}

// SandboxNetwork is what TCP a sandboxed server may use: All, or connect
// to the listed Ports only (none when empty and All is false).
type SandboxNetwork struct {
	All   bool
	Ports []int
}

// String reads as the config would write it.
func (n SandboxNetwork) String() string {
	switch {
	case n.All:
		return "any TCP port"
	case len(n.Ports) == 0:
		return "none"
	}
	parts := make([]string, len(n.Ports))
	for i, p := range n.Ports {
		parts[i] = fmt.Sprint(p)
	}
	return "TCP connect to port " + strings.Join(parts, ", ")
}

// SandboxLimits are resource limits; zero means no limit of toolfold's.
type SandboxLimits struct {
	// Memory bounds the address space of each process ("512MiB").
	Memory ByteSize `json:"memory,omitempty"`
	// Processes bounds how many processes and threads the server's tree
	// may run at once.
	Processes int `json:"processes,omitempty"`
	// OpenFiles bounds each process's open file descriptors.
	OpenFiles int `json:"openFiles,omitempty"`
	// CPU bounds each process's CPU time ("10m").
	CPU Duration `json:"cpu,omitempty"`
}

// SandboxPresets are the preset names a sandbox block accepts.
var SandboxPresets = []string{"go", "node", "none", "python"}

// IsRequired says whether a server must not start unenforced.
func (s *SandboxConfig) IsRequired() bool { return s.Required == nil || *s.Required }

// sandbox validates a server's sandbox block, filling in
// serverDefaults.sandbox where the server sets none, so after loading a
// stdio server's Sandbox is the one that applies. A server's own block
// replaces the default whole, so what it grants is all in one place.
func (v *checker) sandbox(p string, s *ServerConfig) {
	if s.Sandbox == nil {
		if s.Transport == TransportStdio && v.cfg.ServerDefaults.Sandbox != nil {
			d := *v.cfg.ServerDefaults.Sandbox // checked once, under serverDefaults
			s.Sandbox = &d
		}
		return
	}
	if s.Transport != TransportStdio {
		v.errorf(joinPath(p, "sandbox"), `"sandbox" only applies to servers started with "command"; a remote server at "url" runs elsewhere, so remove the key`)
		return
	}
	v.sandboxBlock(joinPath(p, "sandbox"), s.Sandbox)
}

func (v *checker) sandboxBlock(p string, sb *SandboxConfig) {
	if sb.Preset != "" {
		v.enum(joinPath(p, "preset"), sb.Preset, "a sandbox preset", SandboxPresets...)
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read", sb.Read}, {"write", sb.Write}, {"exec", sb.Exec}} {
		for i, path := range list.paths {
			if path == "" || !(filepath.IsAbs(path) || path == "~" || strings.HasPrefix(path, "~/")) {
				v.errorf(indexPath(joinPath(p, list.key), i), "%q is not an absolute path; write it in full, such as \"/home/me/notes\" or \"~/notes\"", path)
			}
		}
	}
	for i, port := range sb.Network.Ports {
		if port < 1 || port > 65535 {
			v.errorf(indexPath(joinPath(p, "network"), i), "%d is not a TCP port; use a number from 1 to 65535", port)
		}
	}
	if sb.Limits.Processes < 0 {
		v.errorf(joinPath(joinPath(p, "limits"), "processes"), "%d is not a number of processes; leave it out for no limit", sb.Limits.Processes)
	}
	if sb.Limits.OpenFiles < 0 {
		v.errorf(joinPath(joinPath(p, "limits"), "openFiles"), "%d is not a number of files; leave it out for no limit", sb.Limits.OpenFiles)
	}
	sb.Network.Ports = slices.Compact(slices.Sorted(slices.Values(sb.Network.Ports)))
}

// SandboxSummary says in one line which rules a stdio server runs under,
// for logs and /api: "none" without a sandbox, "" for a remote server.
func (s ServerConfig) SandboxSummary() string {
	if s.Command == "" {
		return ""
	}
	sb := s.Sandbox
	if sb == nil {
		return "none"
	}
	preset := sb.Preset
	if preset == "" {
		preset = "none"
	}
	parts := []string{"preset " + preset}
	for _, l := range []struct {
		key   string
		paths []string
	}{{"read", sb.Read}, {"write", sb.Write}, {"exec", sb.Exec}} {
		if len(l.paths) > 0 {
			parts = append(parts, l.key+" "+strings.Join(l.paths, " "))
		}
	}
	parts = append(parts, "network "+sb.Network.String())
	if sb.Limits.Processes > 0 {
		parts = append(parts, fmt.Sprintf("processes %d", sb.Limits.Processes))
	}
	if !sb.IsRequired() {
		parts = append(parts, "not required")
	}
	return strings.Join(parts, "; ")
}

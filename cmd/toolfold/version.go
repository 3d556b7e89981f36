package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Set by release builds (scripts/release.sh, the Dockerfile), which may
// build without the .git folder Go reads the commit from:
//
//	go build -ldflags "-X main.buildVersion=v1.2.3 -X main.buildCommit=abc -X main.buildDate=2026-01-02T03:04:05Z"
var (
	buildVersion = ""
	buildCommit  = ""
	buildDate    = ""
)

// version is the release, else the module version Go recorded (set by
// go install module@version), else "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// vcsSetting is one of the vcs.* settings Go records when it builds
// inside a repository, or "".
func vcsSetting(key string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == key {
				return s.Value
			}
		}
	}
	return ""
}

// commit is the revision built, marked when the work tree had changes.
func commit() string {
	if buildCommit != "" {
		return buildCommit
	}
	rev := vcsSetting("vcs.revision")
	if rev == "" {
		return "unknown"
	}
	if vcsSetting("vcs.modified") == "true" {
		rev += " (modified)"
	}
	return rev
}

// buildTime is the time of the commit built (not of the build, so that a
// rebuild of the same commit prints the same).
func buildTime() string {
	if buildDate != "" {
		return buildDate
	}
	if t := vcsSetting("vcs.time"); t != "" {
		return t
	}
	return "unknown"
}

func runVersion(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	fmt.Fprintf(e.stdout, "version: %s\n", version())
	fmt.Fprintf(e.stdout, "commit: %s\n", commit())
	fmt.Fprintf(e.stdout, "date: %s\n", buildTime())
	fmt.Fprintf(e.stdout, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(e.stdout, "MCP protocol versions: %s\n", strings.Join(mcp.SupportedProtocolVersions(), ", "))
	return nil
}

package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Set at build time: go build -ldflags "-X main.buildVersion=v1.2.3 -X main.buildCommit=abc".
var (
	buildVersion = ""
	buildCommit  = ""
)

// version is the release, else the module version Go recorded, else "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

func commit() string {
	if buildCommit != "" {
		return buildCommit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func runVersion(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "toolfold %s (commit %s, %s)\n", version(), commit(), runtime.Version())
	fmt.Fprintf(e.stdout, "MCP protocol versions: %s\n", strings.Join(mcp.SupportedProtocolVersions(), ", "))
	return nil
}

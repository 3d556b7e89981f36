package cmdtool

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func flagByLong(page HelpPage, long string) (HelpFlag, bool) {
	for _, f := range page.Flags {
		if f.Long == long {
			return f, true
		}
	}
	return HelpFlag{}, false
}

func commandNames(page HelpPage) []string {
	var out []string
	for _, c := range page.Commands {
		out = append(out, c.Name)
	}
	return out
}

func TestParseHelpStyles(t *testing.T) {
	tests := []struct {
		name         string
		text         string
		style        HelpStyle
		commands     []string
		needsCommand bool
		flags        map[string]ParamType // long flag → type
		enums        map[string][]string
		positionals  []string // name, "name[]" for arrays, "name?" optional
	}{
		{
			name: "kubectl",
			text: `Display one or many resources.

Examples:
  # List all pods in ps output format
  kubectl get pods

Options:
    -A, --all-namespaces=false:
	If present, list the requested object(s) across all namespaces.

    --chunk-size=500:
	Return large lists in chunks rather than all at once.

    -o, --output='':
	Output format. One of: (json, yaml, name).

    -l, --selector='':
	Selector (label query) to filter on.

    --show-kind=false:
	If present, list the resource type for the requested object(s).

Usage:
  kubectl get [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file|custom-columns|custom-columns-file|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags] [options]

Use "kubectl options" for a list of global command-line options (applies to all commands).
`,
			style:       StyleCobra,
			flags:       map[string]ParamType{"--all-namespaces": TypeBoolean, "--chunk-size": TypeInteger, "--output": TypeString, "--selector": TypeString, "--show-kind": TypeBoolean},
			positionals: []string{"args[]?"},
		},
		{
			name: "gh",
			text: `Work with GitHub Pull Requests.

USAGE
  gh pr <command> [flags]

GENERAL COMMANDS
  create:      Create a pull request
  list:        List pull requests in a repository
  status:      Show status of relevant pull requests

TARGETED COMMANDS
  checkout:    Check out a pull request in git
  view:        View a pull request

FLAGS
  -R, --repo [HOST/]OWNER/REPO   Select another repository using the [HOST/]OWNER/REPO format

INHERITED FLAGS
  --help   Show help for command

LEARN MORE
  Use 'gh <command> <subcommand> --help' for more information about a command.
`,
			style:        StyleCobra,
			commands:     []string{"create", "list", "status", "checkout", "view"},
			needsCommand: true,
			flags:        map[string]ParamType{"--repo": TypeString},
		},
		{
			name: "gh list",
			text: `List pull requests in a GitHub repository.

USAGE
  gh pr list [flags]

FLAGS
  -a, --assignee string   Filter by assignee
  -d, --draft             Filter by draft state
  -L, --limit int         Maximum number of items to fetch (default 30)
  -s, --state string      Filter by state: {open|closed|merged|all} (default "open")
  -l, --label strings     Filter by label
`,
			style: StyleCobra,
			flags: map[string]ParamType{"--assignee": TypeString, "--draft": TypeBoolean, "--limit": TypeInteger, "--state": TypeString, "--label": TypeArray},
		},
		{
			name: "cobra group",
			text: `Usage:  docker volume COMMAND

Manage volumes

Commands:
  create      Create a volume
  ls          List volumes

Run 'docker volume COMMAND --help' for more information on a command.
`,
			style: StyleCobra, commands: []string{"create", "ls"}, needsCommand: true,
		},
		{
			name: "cobra leaf",
			text: `Usage:  docker volume rm [OPTIONS] VOLUME [VOLUME...]

Remove one or more volumes. You cannot remove a volume that is in use by a container.

Aliases:
  docker volume rm, docker volume remove

Examples:
  $ docker volume rm hello
  hello

Options:
  -f, --force   Force the removal of one or more volumes
`,
			style: StyleCobra, flags: map[string]ParamType{"--force": TypeBoolean}, positionals: []string{"volume[]"},
		},
		{
			name: "click",
			text: `Usage: tool sync [OPTIONS] SRC [DST]...

  Synchronise SRC to each DST.

Options:
  -n, --dry-run               Show what would change.
  --jobs INTEGER RANGE        Parallel jobs.  [1<=x<=16]
  --mode [fast|safe]          How to copy.  [default: safe]
  --checksum / --no-checksum  Compare contents.
  --exclude TEXT              Pattern to skip.
  --token TEXT                API token.  [required]
  --help                      Show this message and exit.
`,
			style: StyleClick,
			flags: map[string]ParamType{"--dry-run": TypeBoolean, "--jobs": TypeInteger, "--mode": TypeString, "--checksum": TypeBoolean, "--exclude": TypeString, "--token": TypeString},
			enums: map[string][]string{"--mode": {"fast", "safe"}}, positionals: []string{"src", "dst[]?"},
		},
		{
			name: "argparse",
			text: `usage: tool [-h] [--level {debug,info}] [--tag TAG [TAG ...]] [-n N] input [outputs ...]

Process things.

positional arguments:
  input                 the input file
  outputs               where to write

options:
  -h, --help            show this help message and exit
  --level {debug,info}  log level
  --tag TAG [TAG ...]   tags
  -n N                  how many
`,
			style: StyleArgparse,
			flags: map[string]ParamType{"--level": TypeString, "--tag": TypeArray},
			enums: map[string][]string{"--level": {"debug", "info"}}, positionals: []string{"input", "outputs[]?"},
		},
		{
			name: "git",
			text: `usage: git log [<options>] [<revision-range>] [[--] <path>...]
   or: git show [<options>] <object>...

    -q, --quiet           suppress diff output
    --decorate[=...]      decorate options
    -n, --max-count <n>   limit
    --[no-]follow         follow renames
    -L <range:file>       trace the evolution of line range
`,
			style: StyleGit,
			flags: map[string]ParamType{"--quiet": TypeBoolean, "--decorate": TypeString, "--max-count": TypeInteger, "--follow": TypeBoolean},
			// revision_range comes before "--", path after it.
			positionals: []string{"revision_range?<", "path[]?"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := ParseHelp(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if page.Style != tt.style {
				t.Errorf("style %s, want %s", page.Style, tt.style)
			}
			if got := commandNames(page); !slices.Equal(got, tt.commands) {
				t.Errorf("commands %v, want %v", got, tt.commands)
			}
			if page.NeedsCommand != tt.needsCommand {
				t.Errorf("needsCommand %v", page.NeedsCommand)
			}
			for long, typ := range tt.flags {
				f, ok := flagByLong(page, long)
				if !ok {
					t.Errorf("flag %s missing from %+v", long, page.Flags)
					continue
				}
				if f.Type != typ {
					t.Errorf("flag %s: type %s, want %s", long, f.Type, typ)
				}
			}
			if len(page.Flags) != len(tt.flags) && tt.name != "argparse" && tt.name != "git" {
				t.Errorf("%d flags, want %d: %+v", len(page.Flags), len(tt.flags), page.Flags)
			}
			for long, enum := range tt.enums {
				f, _ := flagByLong(page, long)
				if !slices.Equal(f.Enum, enum) {
					t.Errorf("flag %s: enum %v, want %v", long, f.Enum, enum)
				}
			}
			var got []string
			for _, p := range page.Positionals {
				s := p.Name
				if p.Array {
					s += "[]"
				}
				if p.Optional {
					s += "?"
				}
				if p.BeforeSeparator {
					s += "<"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.positionals) {
				t.Errorf("positionals %v, want %v", got, tt.positionals)
			}
		})
	}
}

func TestParseHelpDropsHelpAndVersion(t *testing.T) {
	page, err := ParseHelp("Usage: x [OPTIONS]\n\nOptions:\n  -h, --help     help for x\n  -v, --version  version\n  --verbose      more\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Flags) != 1 || page.Flags[0].Long != "--verbose" {
		t.Errorf("flags: %+v", page.Flags)
	}
}

func TestParseHelpNothing(t *testing.T) {
	for _, text := range []string{"", "hello world\n", "\x00\x01\x02"} {
		if _, err := ParseHelp(text); !errors.Is(err, ErrNoHelp) {
			t.Errorf("ParseHelp(%q) = %v, want ErrNoHelp", text, err)
		}
	}
}

func TestParseHelpGitNested(t *testing.T) {
	page, err := ParseHelp(`usage: git remote [-v | --verbose]
   or: git remote add [-t <branch>] [-m <master>] [-f] [--tags | --no-tags] [--mirror=<fetch|push>] <name> <url>
   or: git remote [-v | --verbose] show [-n] <name>
   or: git remote prune [-n | --dry-run] <name>

    -v, --verbose         be verbose; must be placed before a subcommand
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := commandNames(page); !slices.Equal(got, []string{"add", "show", "prune"}) {
		t.Errorf("commands %v", got)
	}
	if page.NeedsCommand {
		t.Error("git remote runs alone")
	}
	add, err := ParseHelp("usage: " + page.Commands[0].Usage)
	if err != nil {
		t.Fatal(err)
	}
	mirror, ok := flagByLong(add, "--mirror")
	if !ok || !slices.Equal(mirror.Enum, []string{"fetch", "push"}) {
		t.Errorf("--mirror from the usage line: %+v", add.Flags)
	}
	if len(add.Positionals) != 2 || add.Positionals[0].Name != "name" || add.Positionals[1].Name != "url" {
		t.Errorf("positionals: %+v", add.Positionals)
	}
}

func TestParseHelpStripsEscapes(t *testing.T) {
	page, err := ParseHelp("\x1b[1mUsage:\x1b[0m tool [OPTIONS]\n\nOptions:\n  --co\blor TEXT  colour\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := flagByLong(page, "--color"); !ok && !strings.Contains(page.Usage[0], "tool") {
		t.Errorf("escapes not stripped: %+v", page)
	}
}

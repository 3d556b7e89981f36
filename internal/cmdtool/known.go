package cmdtool

import (
	"path/filepath"
	"slices"
	"strings"
)

// Tables of well-known programs, keyed by the base name of the command.
// They only affect discovered actions; declared actions are taken as
// configured. Every entry is a glob over action names.
//
// Why tables at all: a discovered action is an unknown, so it is neither
// read-only nor destructive by default, and read-only mode hides it. For
// the handful of programs everyone folds (git, docker, kubectl) that would
// make read-only mode useless, so the subcommands that are read-only by
// their nature are listed here; ones that destroy data are marked so
// clients can warn; and ones that hand the model a way to run arbitrary
// commands are not discovered at all.
type knownProgram struct {
	readOnly    []string // actions that change nothing
	destructive []string // actions that may destroy data
	hidden      []string // actions never discovered (declare them to expose them)
	deniedFlags []string // long options never discovered, beyond deniedFlagsAll
	// helpCategories, when set, keeps only subcommands listed under a
	// heading starting with one of these (lower-case).
	helpCategories []string
}

var knownPrograms = map[string]knownProgram{
	"git": {
		readOnly: []string{"status", "log", "diff", "show", "blame", "annotate", "shortlog", "describe",
			"grep", "version", "whatchanged", "show-branch", "count-objects", "range-diff", "remote_get-url"},
		destructive: []string{"clean", "reset", "rm", "push", "prune", "gc", "restore", "checkout", "switch",
			"branch", "tag", "stash_drop", "stash_clear", "remote_remove", "remote_rm", "worktree_remove",
			"worktree_prune", "reflog_expire", "reflog_delete", "rebase", "replace", "repack", "notes_remove"},
		// config can set core.sshCommand, core.fsmonitor, core.pager or an
		// alias: arbitrary command execution on the next git call. The
		// others run external programs or GUIs by design.
		hidden: []string{"config", "filter-branch", "gitk", "gui", "citool", "instaweb", "daemon", "help",
			"difftool", "mergetool", "bisect_run", "submodule_foreach", "credential*", "web--browse", "bugreport", "diagnose"},
		// --output writes any file; --exec, --config and --template run or
		// install commands; the others point git at other repositories.
		deniedFlags: []string{"--output", "--output-directory", "--exec", "--config", "--template",
			"--git-dir", "--work-tree", "--separate-git-dir"},
		// Plumbing, concept guides, other SCMs and external commands are
		// left out: porcelain and ancillary commands are what people use.
		helpCategories: []string{"main porcelain", "ancillary"},
	},
	"docker": {
		readOnly: []string{"ps", "images", "inspect", "logs", "version", "info", "history", "top", "port", "diff", "search",
			"container_ls", "container_inspect", "container_logs", "container_top", "container_port", "container_diff",
			"image_ls", "image_inspect", "image_history", "network_ls", "network_inspect", "volume_ls", "volume_inspect",
			"context_ls", "context_inspect", "context_show", "system_df", "system_info", "manifest_inspect",
			"plugin_ls", "plugin_inspect", "node_ls", "node_inspect", "service_ls", "service_inspect", "service_ps",
			"service_logs", "stack_ls", "stack_ps", "stack_services", "secret_ls", "secret_inspect", "config_ls", "config_inspect",
			"builder_du"},
		destructive: []string{"rm", "rmi", "kill", "stop", "*_rm", "*_prune", "*_kill", "*_stop", "*_remove", "*_leave", "swarm_*",
			"system_prune"},
		hidden: []string{"help", "completion", "login", "logout"},
	},
	"kubectl": {
		readOnly:    []string{"get", "describe", "logs", "explain", "top", "top_*", "version", "api-resources", "api-versions", "cluster-info", "config_view", "config_get-contexts", "config_current-context"},
		destructive: []string{"delete", "drain", "replace", "cordon", "taint", "scale", "rollout_undo", "*_delete*"},
		hidden:      []string{"help", "completion", "exec", "attach", "port-forward", "proxy", "cp", "debug", "plugin", "config_set*", "options"},
	},
}

// deniedFlagsAll are never discovered for any program: they make the
// program run another command, load code, or read credentials from a
// place the model picks. Declare a parameter to expose one deliberately.
var deniedFlagsAll = []string{"--upload-pack", "--receive-pack", "--exec-path", "--extcmd",
	"--open-files-in-pager", "--kubeconfig", "--upload-archive", "--ssh-command", "--exec-command"}

// hiddenEverywhere are subcommands that are never useful as tools.
var hiddenEverywhere = []string{"help", "completion", "__complete", "__completeNoDesc"}

func knownFor(p Program) knownProgram {
	return knownPrograms[filepath.Base(p.Command)]
}

func matchesAny(globs []string, name string) bool {
	return slices.ContainsFunc(globs, func(g string) bool { return MatchGlob(g, name) })
}

func (k knownProgram) flagDenied(long string) bool {
	return long != "" && (slices.Contains(deniedFlagsAll, long) || slices.Contains(k.deniedFlags, long))
}

func (k knownProgram) keepCategory(category string) bool {
	if len(k.helpCategories) == 0 || category == "usage" {
		return true
	}
	c := strings.ToLower(category)
	return slices.ContainsFunc(k.helpCategories, func(prefix string) bool { return strings.HasPrefix(c, prefix) })
}

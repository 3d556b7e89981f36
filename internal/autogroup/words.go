package autogroup

import (
	"strings"
	"unicode"
)

// splitWords cuts a tool name or a piece of text into lower-case words at
// separators and camel-case boundaries: "TwilioApiV2010--CreateQueue" →
// twilio api v2010 create queue; "r2_list_buckets" → r2 list buckets.
// Letters and digits stay together ("v2010", "r2", "d1").
func splitWords(s string) []string {
	var out []string
	// cur is the word so far, already lowercased (strings.ToLower maps
	// rune by rune the same way): one allocation per word, not two, for
	// the descriptions of every tool a start derives groups from.
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// fooBar → foo|Bar; HTTPServer → HTTP|Server; keep "V2010" whole.
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, unicode.ToLower(r))
	}
	flush()
	// "AddOn" is one word, not a verb and a small word.
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "add" && out[i+1] == "on" {
			out = append(out[:i:i], append([]string{"addon"}, out[i+2:]...)...)
		}
	}
	return out
}

// verbs are the words that name what a tool does rather than what it acts
// on. A name's verb is dropped to find its resource; verbs are never
// grouping keys.
var verbs = set(
	"abort", "activate", "add", "aggregate", "analyze", "append", "apply", "approve", "archive", "assign", "attach", "audit",
	"batch", "bulk", "cancel", "check", "clear", "click", "clone", "close", "compare", "complete", "compute", "configure", "confirm", "connect", "copy", "count", "create",
	"deactivate", "delete", "deploy", "describe", "detach", "diff", "disable", "disconnect", "dispatch", "download", "drag", "drop", "duplicate",
	"edit", "emulate", "enable", "evaluate", "exec", "execute", "explain", "export", "fetch", "fill", "finalize", "find", "fork", "generate", "get",
	"handle", "hover", "import", "inspect", "install", "invoke", "kill", "list", "load", "lookup", "manage", "merge", "modify", "move", "navigate",
	"open", "patch", "pause", "ping", "post", "press", "promote", "publish", "purge", "push", "put", "query", "read", "rebase", "reboot", "reconnect",
	"refresh", "remove", "rename", "render", "replace", "request", "reset", "resize", "restart", "restore", "resume", "retrieve", "revoke", "rollback",
	"run", "save", "scale", "scrape", "search", "select", "send", "set", "show", "start", "stop", "submit", "suggest", "summarize", "sync", "take",
	"test", "toggle", "trigger", "type", "unassign", "uninstall", "unlink", "unset", "update", "upgrade", "upload", "upsert", "validate", "verify",
	"view", "wait", "write",
)

// readVerbs are the verbs of tools that only look.
var readVerbs = set(
	"aggregate", "analyze", "audit", "check", "compare", "count", "describe", "diff", "explain", "export", "fetch", "find", "get", "inspect",
	"list", "lookup", "query", "read", "retrieve", "search", "show", "summarize", "view",
)

// stopWords carry no topic in names or descriptions.
var stopWords = set(
	"a", "about", "across", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "before", "being", "between", "both", "but", "by",
	"can", "could", "do", "does", "each", "either", "else", "etc", "every", "for", "from", "given", "has", "have", "how", "if", "in", "including", "into",
	"is", "it", "its", "just", "may", "more", "most", "must", "my", "new", "no", "not", "of", "off", "on", "one", "only", "optional", "optionally", "or", "other",
	"our", "over", "per", "provided", "should", "so", "some", "specific", "specified", "such", "than", "that", "the", "their", "them", "then", "there", "these",
	"this", "those", "through", "to", "tool", "tools", "two", "under", "up", "use", "used", "uses", "using", "via", "want", "was", "were", "what", "when",
	"where", "whether", "which", "while", "who", "will", "with", "within", "without", "would", "you", "your",
)

// descStopWords are words of descriptions that describe the API rather
// than the tool's topic ("Make a POST request to ...", "the resource",
// "returns the instance").
var descStopWords = set(
	"available", "based", "common", "complete", "detailed", "different", "display", "existing", "following", "full", "general", "managed",
	"multiple", "related", "require", "required", "requires", "simple", "single", "title", "useful", "int", "integer", "limit", "cursor", "offset", "pagination", "number", "boolean", "uid", "uuid", "various", "visualize",
	"allow", "allows", "api", "argument", "azure", "command", "commands", "enable", "enables", "hierarchical", "include", "includes", "need", "operation", "operations",
	"provide", "provides", "routed", "router", "sub", "support", "supports", "wrap", "argument", "arguments", "call", "calls", "default", "field", "fields", "format", "http", "id", "ids", "information", "input", "instance",
	"json", "make", "mcp", "name", "object", "option", "options", "output", "parameter", "parameters", "property", "properties", "resource",
	"resources", "response", "result", "results", "return", "returns", "server", "sid", "string", "true", "false", "uri", "url", "value", "values",
)

// abbreviations fold the short forms names use into the word the other
// names of a server spell out ("aggregate-db" beside "list-databases").
var abbreviations = map[string]string{"db": "database", "dbs": "database", "repo": "repository", "repos": "repository", "dir": "directory", "dirs": "directory"}

// nameStopWords are the small words of tool names that say nothing about
// the resource ("get_dashboard_by_uid", "CreateNewKey", "maintenance_on").
var nameStopWords = set("a", "an", "and", "all", "by", "many", "multiple", "one", "current", "for", "from", "in", "into", "my", "new", "of", "off", "on", "or", "the", "to", "with")

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// singular folds simple English plurals so that "buckets" and "bucket",
// "policies" and "policy" are one word. It leaves short words and words
// that only look plural ("status", "analysis") alone.
func singular(w string) string {
	if long, ok := abbreviations[w]; ok {
		return long
	}
	switch {
	case len(w) < 3 || !strings.HasSuffix(w, "s"):
		return w
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"), strings.HasSuffix(w, "ics"):
		return w
	}
	return w[:len(w)-1]
}

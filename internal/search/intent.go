package search

// An intent is the kind of operation a request asks for or a tool
// performs. Tool names lead with a verb (create_issue, ListCall,
// API-post-page, kubectl_delete) and requests say what they want done in
// many more words ("file a bug", "which pods exist", "forget Bob", "hang
// up"), so both sides are mapped to a few classes. A tool whose class the
// request asks for is preferred over its siblings that act on the same
// object in another way (create_issue over list_issues for "file a bug";
// list_subscriptions under cancel_subscription for "stop a subscription").
type intent uint8

const (
	intentNone intent = iota
	intentCreate
	intentRead // list, get, show, describe
	intentSearch
	intentUpdate
	intentDelete
	intentRun
	intentStop
)

// intentSet is a bit set of intents.
type intentSet uint16

func (s intentSet) has(i intent) bool { return s&(1<<i) != 0 }

func setOf(intents ...intent) intentSet {
	var s intentSet
	for _, i := range intents {
		s |= 1 << i
	}
	return s
}

// toolVerbs maps the stems of verbs that open tool names to their intent,
// HTTP methods included (Notion's API-post-page creates, API-patch-page
// updates). Words that can be a verb or an object ("file", "open",
// "record") are left out: a name's class must be unambiguous.
var toolVerbs = stemKeys(map[string]intent{
	"create": intentCreate, "add": intentCreate, "new": intentCreate, "insert": intentCreate,
	"post": intentCreate, "generate": intentCreate, "make": intentCreate, "register": intentCreate,
	"append": intentCreate, "push": intentCreate, "upload": intentCreate, "install": intentCreate,
	"fork": intentCreate, "write": intentCreate, "send": intentCreate, "apply": intentUpdate,
	"list": intentRead, "get": intentRead, "fetch": intentRead, "retrieve": intentRead,
	"read": intentRead, "show": intentRead, "describe": intentRead, "view": intentRead,
	"info": intentRead, "download": intentRead, "export": intentRead, "explain": intentRead,
	"search": intentSearch, "find": intentSearch, "query": intentSearch, "lookup": intentSearch,
	"update": intentUpdate, "edit": intentUpdate, "set": intentUpdate, "patch": intentUpdate,
	"put": intentUpdate, "modify": intentUpdate, "rename": intentUpdate, "move": intentUpdate,
	"toggle": intentUpdate, "change": intentUpdate, "upgrade": intentUpdate, "merge": intentUpdate,
	"delete": intentDelete, "remove": intentDelete, "drop": intentDelete, "destroy": intentDelete,
	"purge": intentDelete, "uninstall": intentDelete, "cleanup": intentDelete, "clear": intentDelete,
	"run": intentRun, "execute": intentRun, "exec": intentRun, "trigger": intentRun,
	"start": intentRun, "launch": intentRun, "invoke": intentRun, "rerun": intentRun,
	"stop": intentStop, "cancel": intentStop, "kill": intentStop, "terminate": intentStop,
	"close": intentStop, "abort": intentStop, "halt": intentStop, "disconnect": intentStop,
	"pause": intentStop,
})

// requestVerbs maps the stems of the words a request uses to ask for an
// operation. It is wider than toolVerbs: people "forget" a fact, "spin up"
// a project, "mark" an issue resolved. Words that are as often nouns or
// that mean different operations are left out: "open" (a file or a bug),
// "start" (a process or a project), "log", "build", "draft", "end".
var requestVerbs = stemKeys(map[string]intent{
	"create": intentCreate, "add": intentCreate, "new": intentCreate, "make": intentCreate,
	"insert": intentCreate, "generate": intentCreate, "register": intentCreate,
	"compose": intentCreate, "write": intentCreate, "post": intentCreate,
	"send": intentCreate, "submit": intentCreate, "propose": intentCreate,
	"list": intentRead, "show": intentRead, "get": intentRead, "fetch": intentRead,
	"retrieve": intentRead, "read": intentRead, "view": intentRead, "display": intentRead,
	"see": intentRead, "describe": intentRead, "inspect": intentRead, "print": intentRead,
	"check": intentRead, "tell": intentRead, "enumerate": intentRead,
	"search": intentSearch, "find": intentSearch, "lookup": intentSearch, "grep": intentSearch,
	"locate": intentSearch, "query": intentSearch, "seek": intentSearch,
	"update": intentUpdate, "edit": intentUpdate, "change": intentUpdate, "modify": intentUpdate,
	"set": intentUpdate, "rename": intentUpdate, "alter": intentUpdate, "patch": intentUpdate,
	"replace": intentUpdate, "assign": intentUpdate, "mark": intentUpdate, "move": intentUpdate,
	"delete": intentDelete, "remove": intentDelete, "erase": intentDelete, "destroy": intentDelete,
	"drop": intentDelete, "purge": intentDelete, "forget": intentDelete, "uninstall": intentDelete,
	"discard": intentDelete, "wipe": intentDelete,
	"run": intentRun, "execute": intentRun, "exec": intentRun, "trigger": intentRun,
	"launch": intentRun, "invoke": intentRun, "rerun": intentRun,
	"stop": intentStop, "cancel": intentStop, "kill": intentStop, "terminate": intentStop,
	"abort": intentStop, "halt": intentStop, "quit": intentStop,
})

// requestIdioms are multi-word ways of asking for an operation.
var requestIdioms = map[string]intent{
	"look up": intentSearch, "set up": intentCreate, "spin up": intentCreate,
	"hang up": intentStop, "shut down": intentStop, "get rid": intentDelete,
	"kick off": intentRun, "how many": intentRead,
}

func stemKeys(m map[string]intent) map[string]intent {
	out := make(map[string]intent, len(m))
	for w, i := range m {
		out[stem(w)] = i
	}
	return out
}

// compatible reports whether a tool of class tool can serve a request
// asking for want without contradicting it. Reading and searching serve
// each other; creating and updating overlap (create_or_update_file,
// kv_put, "append a block"); stopping and deleting overlap (cancel a
// subscription, remove a participant); running and creating overlap
// ("start a new pipeline"). Reading never serves a change and a change
// never serves a read.
func compatible(want, tool intent) bool {
	if want == tool {
		return true
	}
	pair := setOf(want, tool)
	for _, ok := range []intentSet{
		setOf(intentRead, intentSearch),
		setOf(intentCreate, intentUpdate),
		setOf(intentDelete, intentStop),
		setOf(intentRun, intentCreate),
		setOf(intentUpdate, intentStop),
		setOf(intentUpdate, intentDelete),
	} {
		if pair == ok {
			return true
		}
	}
	return false
}

// toolIntent is the class of the first verb among a tool name's words.
// An HTTP method followed by another verb yields to it: Notion's
// API-post-search searches.
func toolIntent(nameStems []string) intent {
	var r intentReader
	for _, s := range nameStems {
		r.see(s)
	}
	return r.intent
}

// intentReader finds toolIntent word by word, so that an index build
// need not collect the words of every name.
type intentReader struct {
	intent intent
	done   bool
}

func (r *intentReader) see(stem string) {
	if r.done {
		return
	}
	i, ok := toolVerbs[stem]
	if !ok {
		return
	}
	if r.intent != intentNone || !httpMethods[stem] {
		r.done = true
	}
	r.intent = i
}

var httpMethods = map[string]bool{"get": true, "post": true, "put": true, "patch": true, "delet": true}

// requestIntents collects the operations a request asks for. A question
// ("which pods exist", "is my job done", "what processes are running")
// asks to read or search: the verbs after the question word describe what
// is, not what to do. Otherwise every operation word counts, and a verb
// that is ambiguous alone ("open", "file", "log", "raise") asks to create
// when it opens the request with "a" or "an": one opens a ticket, files a
// bug, logs a call, but opens the file.
func requestIntents(words []queryWord) intentSet {
	if isQuestion(words) {
		return setOf(intentRead, intentSearch)
	}
	var s intentSet
	if opensWithCreatingVerb(words) {
		s |= setOf(intentCreate)
	}
	for i, w := range words {
		if i+1 < len(words) {
			if in, ok := requestIdioms[w.raw+" "+words[i+1].raw]; ok {
				s |= setOf(in)
				continue
			}
		}
		if in, ok := requestVerbs[w.stem]; ok {
			s |= setOf(in)
		}
	}
	return s
}

// opensWithCreatingVerb reports whether a request opens with one of
// creatingVerbs used as a verb: followed by "a" or "an".
func opensWithCreatingVerb(words []queryWord) bool {
	return len(words) > 1 && creatingVerbs[words[0].raw] && (words[1].raw == "a" || words[1].raw == "an")
}

var createStem = stem("create")

// creatingVerbs ask to create when followed by an article: "open a
// ticket", "file a bug", "log a call", "raise an incident", "report a
// problem". ("start a" is left out: one starts a session but also a
// process or a trace, which run.)
var creatingVerbs = map[string]bool{
	"open": true, "file": true, "log": true, "raise": true, "report": true,
}

// intentFactor is what a tool's score is multiplied by for a request's
// intents: a boost when its class is asked for, a penalty when it
// contradicts every intent the request states, 1 when either side says
// nothing.
func (ix *Index) intentFactor(tool intent, want intentSet) float64 {
	if tool == intentNone || want == 0 {
		return 1
	}
	if want.has(tool) {
		return 1 + ix.tune.intentBoost
	}
	for i := intentCreate; i <= intentStop; i++ {
		if want.has(i) && compatible(i, tool) {
			return 1
		}
	}
	return 1 - ix.tune.intentPenalty
}

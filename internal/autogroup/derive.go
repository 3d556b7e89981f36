package autogroup

import (
	"cmp"
	"slices"
	"strings"
)

// DefaultSize is the target size of a derived group when none is given:
// small enough that enabling a group adds a few thousand tokens at most,
// near the "fewer than 10 to 15 tools per namespace" that model vendors
// advise, large enough that a 200-tool server folds in two levels.
const DefaultSize = 12

// Tool is what derivation reads of one tool.
type Tool struct {
	// ID is the tool's unique name in the catalog; derived groups list it.
	ID string
	// Name is the tool's own name at its source ("CreateQueue").
	Name string
	// Description is the tool's description.
	Description string
	// ReadOnly is the tool's readOnlyHint.
	ReadOnly bool
}

// Options shape a derivation.
type Options struct {
	// Size is the target size: a group with more direct tools is split,
	// and every derived group holds at most Size direct tools unless its
	// tools cannot be told apart. 0 means DefaultSize.
	Size int
	// Ignore are words of descriptions that say nothing inside this group,
	// typically the group's own name ("Firecrawl" in every firecrawl tool's
	// description). Names keep them: "files" is a fine resource of a group
	// named files.
	Ignore []string
	// Taken reports local names already used by children of the group
	// (declared ones), which derived children must not reuse.
	Taken func(local string) bool
	// Name and Instructions are the group's own, for the summary of the
	// root (Node.Description); Name defaults to the first Ignore word.
	Name, Instructions string
}

// Node is one group of a derived tree. The root is the group that was
// split: its Tools are the ones left directly in it.
type Node struct {
	// Name is the local name ("queue"); the root's is "".
	Name string
	// Description is one line that tells a model what the group holds;
	// the root's summarizes the whole group by what its tools do.
	Description string
	// Tools are the IDs of the group's direct tools, sorted.
	Tools []string
	// Children are the derived child groups, sorted by Name.
	Children []*Node
	// Basis says what the group was derived from: "name", "description",
	// "access" (read versus change) or "rest" (the tools no other derived
	// group took).
	Basis string
}

// Size counts the tools in the node and below.
func (n *Node) Size() int {
	total := len(n.Tools)
	for _, c := range n.Children {
		total += c.Size()
	}
	return total
}

// Walk calls fn for n and every descendant, parents first, with the
// node's path of local names from the root (the root's path is empty).
func (n *Node) Walk(fn func(path []string, n *Node)) {
	var visit func(path []string, n *Node)
	visit = func(path []string, n *Node) {
		fn(path, n)
		for _, c := range n.Children {
			visit(append(slices.Clip(path), c.Name), c)
		}
	}
	visit(nil, n)
}

// item is one tool prepared for derivation.
type item struct {
	tool Tool
	// name holds the resource words of the tool's name (verb and small
	// words removed, plurals folded), with surface their spelling.
	name, surface []string
	// verb is the verb the name was cut at, "" if none.
	verb string
	// desc holds the distinct topic words of the description, in order.
	desc []string
	read bool
}

// Derive splits tools into a tree of derived groups of at most
// opts.Size direct tools where the tools allow it. The root holds the
// tools that fit no derived group (at most opts.Size when anything could
// be split). With opts.Size or fewer tools, the root holds them all and
// has no children; so does it when the words structure less than half of
// the tools.
func Derive(tools []Tool, opts Options) *Node {
	size := opts.Size
	if size <= 0 {
		size = DefaultSize
	}
	words := make([][]string, len(tools))
	for i, t := range tools {
		words[i] = splitWords(t.Name)
	}
	stripNamespace(words)
	items := make([]*item, 0, len(tools))
	for i, t := range tools {
		items = append(items, prepare(t, words[i]))
	}
	slices.SortFunc(items, func(a, b *item) int { return cmp.Compare(a.tool.ID, b.tool.ID) })
	ignore := map[string]bool{}
	for _, w := range opts.Ignore {
		for _, x := range splitWords(w) {
			ignore[singular(x)] = true
		}
	}
	name := opts.Name
	if name == "" && len(opts.Ignore) > 0 {
		name = opts.Ignore[0]
	}
	summary := summarize(name, opts.Instructions, items)
	if len(items) <= size+size/2 {
		// Just over the target size, a split puts a step before every
		// tool and saves a few hundred tokens: a 14-tool server stays
		// whole.
		return &Node{Tools: ids(items), Description: summary}
	}
	d := &deriver{size: size, taken: opts.Taken, ignore: ignore}
	root := d.split(items, map[string]bool{}, nil, nil)
	root.Name = ""
	root.Description = summary
	if 2*len(root.Tools) > len(items) {
		// The words found structure for less than half the tools: a split
		// would add a step to reach most of them and save little, so the
		// group stays whole (everything's 13 unrelated demo tools).
		return &Node{Tools: ids(items), Description: summary}
	}
	if len(root.Children) > 0 && len(root.Tools) > 0 {
		d.rehome(root, items)
	}
	if len(root.Children) > 0 && len(root.Tools) >= minCluster {
		// Enabling the big group should cost a model only the list of its
		// groups, not the odd tools no group took: they get one of their
		// own.
		var rest []*item
		for _, it := range items {
			if slices.Contains(root.Tools, it.tool.ID) {
				rest = append(rest, it)
			}
		}
		used := map[string]bool{}
		for _, c := range root.Children {
			used[c.Name] = true
		}
		other := &Node{Name: d.uniqueName("other", used, true), Basis: "rest", Tools: root.Tools}
		other.Description = describe(other, rest, nil)
		root.Tools = nil
		root.Children = append(root.Children, other)
		slices.SortFunc(root.Children, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
	}
	return root
}

// rehome moves tools no derived group took into the group whose resource
// their name or description names ("create_branch" beside a branch group,
// "find" whose description says "collection" beside a collection group),
// where that group has room: a bucket of leftovers is the last place an
// agent looks. Only leaf groups made from names take tools in.
func (d *deriver) rehome(root *Node, items []*item) {
	byID := make(map[string]*item, len(items))
	support := map[string]int{}
	for _, it := range items {
		byID[it.tool.ID] = it
		for _, w := range it.desc {
			support[w]++
		}
	}
	// A description word most of the group shares ("account" in every
	// Twilio path) names no home.
	common := map[string]bool{}
	for w, n := range support {
		if 2*n > len(items) {
			common[w] = true
		}
	}
	var kept []string
	moved := map[*Node]bool{}
	for _, id := range root.Tools {
		it := byID[id]
		var best *Node
		bestAt := -1
		for _, c := range root.Children {
			if c.Basis != "name" || len(c.Children) > 0 || len(c.Tools) >= d.size {
				continue
			}
			at := homeScore(it, strings.Split(c.Name, "_"), common)
			if at >= 0 && (bestAt < 0 || at < bestAt) {
				best, bestAt = c, at
			}
		}
		if best == nil {
			kept = append(kept, id)
			continue
		}
		best.Tools = append(best.Tools, id)
		slices.Sort(best.Tools)
		moved[best] = true
	}
	root.Tools = kept
	for _, c := range root.Children {
		if !moved[c] {
			continue
		}
		var own []*item
		for _, id := range c.Tools {
			own = append(own, byID[id])
		}
		c.Description = describe(c, own, strings.Split(c.Name, "_"))
	}
}

// homeScore is where a group's name words first occur among a tool's
// words, name before description (lower is stronger), or -1 when they do
// not.
func homeScore(it *item, words []string, common map[string]bool) int {
	for i, w := range words {
		words[i] = singular(w)
	}
	for i, w := range it.name {
		if slices.Contains(words, w) {
			return i
		}
	}
	for i, w := range it.desc {
		if i >= 12 {
			break // the opening of a description says what it acts on
		}
		if !common[w] && slices.Contains(words, w) {
			return 100 + i
		}
	}
	return -1
}

type deriver struct {
	size   int
	taken  func(string) bool
	ignore map[string]bool // description words that say nothing here
}

// stripNamespace removes the leading words most names share
// ("twilio api v2010", "firecrawl", "browser"), so that the verb and the
// resource are found after them. A word counts when at least
// namespaceShare of the names have it in the same place; the names that
// lack it keep their words, so one odd tool does not change the others.
func stripNamespace(words [][]string) {
	if len(words) < 2 {
		return
	}
	for {
		count := map[string]int{}
		for _, w := range words {
			if len(w) > 1 {
				count[w[0]]++
			}
		}
		best, bestN := "", 0
		for w, n := range count {
			if n > bestN || (n == bestN && w < best) {
				best, bestN = w, n
			}
		}
		if best == "" || float64(bestN) < namespaceShare*float64(len(words)) {
			return
		}
		for i, w := range words {
			if len(w) > 1 && w[0] == best {
				words[i] = w[1:]
			}
		}
	}
}

func prepare(t Tool, words []string) *item {
	it := &item{tool: t}
	// The verb: the first of the first two words that is one (CreateQueue,
	// r2_list_buckets), else a last word that is one (kv_get).
	verbAt := -1
	for i := 0; i < len(words) && i < 2; i++ {
		if verbs[words[i]] {
			verbAt = i
			break
		}
	}
	if verbAt < 0 && len(words) > 1 && verbs[words[len(words)-1]] {
		verbAt = len(words) - 1
	}
	// "batch_create_objects", "bulk_set": a second verb right after the
	// first is part of the action too.
	secondVerb := -1
	if verbAt == 0 && (words[0] == "batch" || words[0] == "bulk") && len(words) > 2 && verbs[words[1]] {
		secondVerb = 1
	}
	for i, w := range words {
		if i == verbAt || i == secondVerb {
			it.verb = w
			continue
		}
		if nameStopWords[w] {
			continue
		}
		it.name = append(it.name, singular(w))
		it.surface = append(it.surface, w)
	}
	seen := map[string]bool{}
	for i, w := range splitWords(t.Description) {
		if i >= 30 {
			break // the opening says what a tool is about; the rest is detail
		}
		// Gerunds ("managing", "accessing") say how, not what.
		if len(w) < 3 || stopWords[w] || descStopWords[w] || verbs[w] || isNumber(w) || strings.HasSuffix(w, "ing") {
			continue
		}
		w = singular(w)
		if descStopWords[w] || verbs[w] {
			continue
		}
		if !seen[w] {
			seen[w] = true
			it.desc = append(it.desc, w)
		}
	}
	it.read = t.ReadOnly || readVerbs[it.verb]
	return it
}

func isNumber(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// split makes the node for items, excluding words already used above.
// topic holds the words of the name-derived groups above and of this one,
// which its description reads from ("SIP credential list").
func (d *deriver) split(items []*item, excluded map[string]bool, key *cluster, topic []string) *Node {
	n := &Node{}
	if key != nil {
		n.Name, n.Basis = key.name, key.basis
		if key.basis == "name" {
			topic = extendTopic(topic, key.full)
		}
	}
	if len(items) <= d.size {
		n.Tools = ids(items)
		n.Description = describe(n, items, topic)
		return n
	}
	var clusters []*cluster
	rest := items
	passes := []struct {
		basis string
		least int
	}{{"name", minCluster}, {"name", 2}, {"description", minCluster}}
	for _, pass := range passes {
		if len(rest) <= d.size && len(clusters) > 0 {
			break
		}
		found, left := d.partition(rest, excluded, pass.basis, pass.least)
		for _, c := range found {
			// A description word that is also a resource of the names
			// ("queue") joins that resource's group.
			if at := slices.IndexFunc(clusters, func(o *cluster) bool { return o.key == c.key }); at >= 0 {
				clusters[at].items = append(clusters[at].items, c.items...)
				continue
			}
			clusters = append(clusters, c)
		}
		rest = left
	}
	if len(rest) > d.size && len(clusters) > 0 {
		// Still too many left over: pairs that share a description word
		// are better company than none.
		found, left := d.partition(rest, excluded, "description", 2)
		clusters = append(clusters, found...)
		rest = left
	}
	if len(rest) > d.size {
		// Nothing in the words tells the rest apart: split what only looks
		// from what changes, when both sides are there.
		var read, change []*item
		for _, it := range rest {
			if it.read {
				read = append(read, it)
			} else {
				change = append(change, it)
			}
		}
		if len(read) > 0 && len(change) > 0 {
			clusters = append(clusters,
				&cluster{key: "read", name: "read", basis: "access", items: read},
				&cluster{key: "change", name: "change", basis: "access", items: change})
			rest = nil
		}
	}
	used := map[string]bool{}
	for _, c := range clusters {
		c.name = d.uniqueName(localName(c.name, topic), used, key == nil)
		used[c.name] = true
		slices.SortFunc(c.items, func(a, b *item) int { return cmp.Compare(a.tool.ID, b.tool.ID) })
		n.Children = append(n.Children, d.split(c.items, withKey(excluded, c.key), c, topic))
	}
	slices.SortFunc(n.Children, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
	n.Tools = ids(rest)
	n.Description = describe(n, items, topic)
	return n
}

// uniqueName keeps derived names apart from each other and, at the top,
// from the declared children.
func (d *deriver) uniqueName(name string, used map[string]bool, top bool) string {
	free := func(s string) bool { return !used[s] && !(top && d.taken != nil && d.taken(s)) }
	if free(name) {
		return name
	}
	for i := 2; ; i++ {
		if s := name + "_" + itoa(i); free(s) {
			return s
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// localName drops from a derived name the words the groups above already
// say: "incoming_phone_number" under "phone_number" is "incoming".
func localName(name string, topic []string) string {
	var kept []string
	for _, w := range strings.Split(name, "_") {
		if !slices.Contains(topic, w) {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		return name
	}
	return strings.Join(kept, "_")
}

// extendTopic is the phrase a child's description starts with: its own
// words when they already hold the words above ("available phone number"
// under "phone number"), else the words above followed by its own.
func extendTopic(topic, own []string) []string {
	out := slices.Clone(topic)
	for _, w := range own {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	holds := true
	for _, w := range topic {
		if !slices.Contains(own, w) {
			holds = false
		}
	}
	if holds {
		return slices.Clone(own)
	}
	return out
}

func withKey(m map[string]bool, k string) map[string]bool {
	out := cloneSet(m)
	out[k] = true
	return out
}

func cloneSet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func ids(items []*item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.tool.ID
	}
	slices.Sort(out)
	return out
}

// cluster is a set of tools that share a key word.
type cluster struct {
	key   string   // the shared (folded) word
	name  string   // the local group name
	full  []string // the words of the name before the topic above was cut
	basis string
	items []*item
}

// minCluster is the fewest tools a derived group is made for: a group of
// one or two is a detour, so such tools stay in the group above.
const minCluster = 3

// namespaceShare is how widely a word must be shared among the tools of
// a group to count as their namespace ("twilio api v2010", "firecrawl")
// rather than a topic: such words never split anything.
const namespaceShare = 0.8

// partition groups items by the word of the basis (name or description)
// they share most, weighing earlier words higher: the resource of
// CallRecording is "call" before "recording". Tools with no word shared
// by minCluster tools are returned as left.
func (d *deriver) partition(items []*item, excluded map[string]bool, basis string, least int) ([]*cluster, []*item) {
	wordsOf := func(it *item) []string {
		if basis == "name" {
			return it.name
		}
		return it.desc
	}
	support := map[string]int{}
	for _, it := range items {
		seen := map[string]bool{}
		for _, w := range wordsOf(it) {
			if !excluded[w] && !seen[w] {
				seen[w] = true
				support[w]++
			}
		}
	}
	skip := cloneSet(excluded)
	for w, n := range support {
		if float64(n) >= namespaceShare*float64(len(items)) && len(items) > 1 {
			skip[w] = true
		}
	}
	if basis == "description" {
		for w := range d.ignore {
			skip[w] = true
		}
		// Description words shared by most tools of the group ("issue" in
		// an issue tracker) and words of one tool say nothing here.
		for w, n := range support {
			if float64(n) > 0.5*float64(len(items)) {
				skip[w] = true
			}
		}
	}
	allowed := map[string]bool{}
	for w, n := range support {
		// "list" left in a name is the tail of a compound (CredentialList,
		// IpAccessControlList): it groups unrelated lists together.
		if n >= least && !skip[w] && w != "list" {
			allowed[w] = true
		}
	}
	// Assign, then drop keys whose clusters ended too small and assign
	// again, until the keys are stable (each round only removes keys).
	var assign map[string][]*item
	var left []*item
	for range 8 {
		assign, left = map[string][]*item{}, nil
		for _, it := range items {
			if k := bestKey(wordsOf(it), allowed, support, basis, d.size); k != "" {
				assign[k] = append(assign[k], it)
			} else {
				left = append(left, it)
			}
		}
		changed := false
		for k, members := range assign {
			if len(members) < least {
				delete(allowed, k)
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	var out []*cluster
	for k, members := range assign {
		if len(members) < least {
			left = append(left, members...)
			continue
		}
		c := &cluster{key: k, basis: basis, items: members}
		c.name = clusterName(c)
		c.full = strings.Split(c.name, "_")
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *cluster) int { return cmp.Compare(a.key, b.key) })
	slices.SortFunc(left, func(a, b *item) int { return cmp.Compare(a.tool.ID, b.tool.ID) })
	return out, left
}

// bestKey picks the allowed word of words with the highest support,
// discounted by position; ties go to the earlier word.
func bestKey(words []string, allowed map[string]bool, support map[string]int, basis string, size int) string {
	best, bestScore := "", 0.0
	for i, w := range words {
		if !allowed[w] {
			continue
		}
		decay := 0.25
		if basis == "description" {
			decay = 0.08
		}
		n := support[w]
		if basis == "description" {
			// A description word shared widely is vague ("service"): past
			// the target size, more support earns nothing.
			n = min(n, size)
		}
		score := float64(n) / (1 + decay*float64(i))
		if score > bestScore || (score == bestScore && w < best) {
			best, bestScore = w, score
		}
	}
	return best
}

// clusterName is the local name of a cluster: its key as the names spell
// it, extended by the words every member's name has right after it
// ("phone" → "phone_number", "service" → "service_binding").
func clusterName(c *cluster) string {
	if c.basis != "name" && c.basis != "description" {
		return sanitize(c.key)
	}
	wordsOf := func(it *item) []string { return it.name }
	words := []string{c.key}
	if c.basis == "name" {
		words[0] = mostCommonSurface(c)
	} else {
		// "best practice", "virtual machine": a description's next word
		// that every member shares makes the name say more.
		wordsOf = func(it *item) []string { return it.desc }
	}
	for step := 1; step < 4; step++ {
		next, ok := "", true
		for _, it := range c.items {
			ws := wordsOf(it)
			at := slices.Index(ws, c.key)
			if at < 0 || at+step >= len(ws) {
				ok = false
				break
			}
			w := ws[at+step]
			if next == "" {
				next = w
			} else if next != w {
				ok = false
				break
			}
		}
		if !ok {
			break
		}
		words = append(words, next)
	}
	return sanitize(strings.Join(words, "_"))
}

// mostCommonSurface is the spelling of the key most members use
// ("buckets" over "bucket"); ties go to the shorter, then the first.
func mostCommonSurface(c *cluster) string {
	count := map[string]int{}
	for _, it := range c.items {
		if at := slices.Index(it.name, c.key); at >= 0 {
			count[it.surface[at]]++
		}
	}
	best := c.key
	for s, n := range count {
		bn := count[best]
		// A spelled-out form beats an abbreviation ("database" over "db");
		// then the most used, then the shorter ("bucket" over "buckets").
		spelled, bestSpelled := strings.HasPrefix(s, c.key), strings.HasPrefix(best, c.key) && count[best] > 0
		if spelled != bestSpelled {
			if spelled {
				best = s
			}
			continue
		}
		if n > bn || (n == bn && (len(s) < len(best) || (len(s) == len(best) && s < best))) {
			best = s
		}
	}
	return best
}

// sanitize keeps a local name within [a-z0-9_].
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r == '_' {
			return r
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
	if s == "" {
		return "group"
	}
	return s
}

package search

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
)

// Doc is one tool as the index sees it, independent of MCP types.
type Doc struct {
	// ID is the name callers pass to call_tool (the wire/catalog name,
	// "github__create_issue"); hits carry it back. IDs must be unique.
	ID string
	// Name is the tool's own name ("create_issue"); empty means ID.
	Name string
	// Prefix is the server namespace ("github"); matched as its own field.
	Prefix      string
	Title       string
	Description string
	Params      []Param
	Groups      []GroupInfo
}

// Param is one input parameter of a tool.
type Param struct {
	Name        string
	Description string
	// Values are the parameter's enum values, if any; they are searched
	// with the description ("APPROVE" finds the review tool).
	Values []string
}

// GroupInfo names a group a tool belongs to. The same group may appear on
// many docs; the first non-empty description wins.
type GroupInfo struct {
	Name        string
	Description string
}

// FieldWeights sets how much a match in each field of a tool counts.
type FieldWeights struct {
	Name             float64 // words of the tool's own name
	Server           float64 // the server prefix, and words nearly every tool of that server shares
	Title            float64
	Description      float64
	ParamName        float64
	ParamDescription float64
	Group            float64 // names and descriptions of the tool's groups
}

// DefaultWeights are the field weights New uses when Options.Weights is nil.
// The README explains the reasoning; TestRecallGoals guards the result.
var DefaultWeights = FieldWeights{
	Name:             6,
	Server:           2.5,
	Title:            3,
	Description:      1.5,
	ParamName:        0.7,
	ParamDescription: 0.35,
	Group:            0.6,
}

// Options tune an Index. The zero value (or nil) gives the defaults.
type Options struct {
	// Weights overrides DefaultWeights.
	Weights *FieldWeights
	// SynonymWeight is the share of an exact match a synonym earns;
	// 0 means the default (0.5), a negative value disables synonyms.
	SynonymWeight float64
	// ExtraSynonyms adds groups in DefaultSynonyms' format.
	ExtraSynonyms []string
	// EquivalentWeight is the share of an exact match an equivalent
	// (DefaultEquivalents, ExtraEquivalents) earns; 0 means the default
	// (0.85). Disabling synonyms disables equivalents too.
	EquivalentWeight float64
	// ExtraEquivalents adds groups in DefaultEquivalents' format.
	ExtraEquivalents []string
	// GroupParents maps a group to its parent group, so that the Group
	// filter of a search also matches the group's descendants. Dotted
	// names ("code.repos" under "code") need no entry.
	GroupParents map[string]string
}

const (
	defaultSynonymWeight    = 0.5
	defaultEquivalentWeight = 0.85
)

type field int

const (
	fieldName field = iota
	fieldServer
	fieldTitle
	fieldDescription
	fieldParamName
	fieldParamDescription
	fieldGroup
	numFields
)

// lengthNormalization is BM25's b per field: how much a long field is
// penalised. Names and titles are short and their length says little;
// descriptions vary from one line to pages of guidance, so a word in a long
// one is weaker evidence.
var lengthNormalization = [numFields]float64{
	fieldName:             0.3,
	fieldServer:           0,
	fieldTitle:            0.3,
	fieldDescription:      0.75,
	fieldParamName:        0.5,
	fieldParamDescription: 0.75,
	fieldGroup:            0.5,
}

func (w *FieldWeights) of(f field) float64 {
	switch f {
	case fieldName:
		return w.Name
	case fieldServer:
		return w.Server
	case fieldTitle:
		return w.Title
	case fieldDescription:
		return w.Description
	case fieldParamName:
		return w.ParamName
	case fieldParamDescription:
		return w.ParamDescription
	default:
		return w.Group
	}
}

// posting records that a stem occurs in a doc, with the doc's complete
// BM25F contribution for that stem (IDF × saturated weighted frequency)
// precomputed: none of it depends on the query.
type posting struct {
	doc    int32
	weight float32
}

// docEntry is what a build gathers per doc; fillHot lays it out flat.
type docEntry struct {
	groups []int32 // group numbers (Index.groupNames)
	// nameTerms are the distinctive words of the tool's name in order, for
	// the adjacency and coverage bonuses.
	nameTerms []int32
	// intent is the operation the tool's name says it performs.
	intent intent
	// server numbers the tool's prefix (its server), for server mentions.
	server int32
}

type groupEntry struct {
	name      string
	ancestors []string // the group itself first, then its parents upward
}

// Index is an immutable ranking index over a tool catalog. Build it with
// New; it is safe for concurrent use.
type Index struct {
	// ids holds the docs' IDs, by doc (see layout.go for why flat).
	ids      stringTable
	byID     []int32   // doc indexes in ID order
	terms    termTable // stem → term ID
	postings flatLists[posting]
	// groupNames holds the groups' names, by group.
	groupNames    stringTable
	groupTerms    termTable // over groups' own names and descriptions
	groupPostings flatLists[posting]
	// serverMentions maps a term that names a server ("github",
	// "hubspot") to that server and how surely the word means it.
	serverMentions map[int32]serverMention
	synonyms       *synonymTable
	synonymWeight  float64
	// equivalentWeight is synonymWeight for equivalents.
	equivalentWeight float64
	tune             tuning
	scratch          sync.Pool // *scratch, reused across queries
	// servers counts the tools' prefixes (docEntry.server's range).
	servers int
	hot     hotDocs
	// idRank is each doc's place in ID order (byID inverted), so that
	// equal scores, common in a catalog of servers alike, are ordered
	// without comparing strings.
	idRank []int32
	// groupRank is each group's place in name order, for ties.
	groupRank []int32
	// nameDocs lists, by term ID, the docs whose name words (nameTerms)
	// hold the term: only they can earn a name bonus.
	nameDocs flatLists[int32]
	// within maps a group's name to the groups it holds, itself included
	// (those with the name among their ancestors), so that a search in a
	// group marks them without reading every group: withinNames numbers
	// the names, within lists each one's groups.
	withinNames termTable
	within      flatLists[int32]
	// exhaustive turns off every shortcut a search takes (the name bonus
	// cache, one-word terms added straight into the totals), so that
	// tests can compare their ranking with the one that scores every doc
	// in full, the plain way.
	exhaustive bool
}

// New builds an index over docs. Later docs with an ID already seen are
// ignored.
func New(docs []Doc, opts *Options) *Index {
	return newIndex(docs, opts, defaultTuning)
}

func newIndex(docs []Doc, opts *Options, tune tuning) *Index {
	if opts == nil {
		opts = &Options{}
	}
	weights := DefaultWeights
	if opts.Weights != nil {
		weights = *opts.Weights
	}
	ix := &Index{
		synonymWeight: opts.SynonymWeight,
		tune:          tune,
	}
	if ix.synonymWeight == 0 {
		ix.synonymWeight = defaultSynonymWeight
	}
	ix.equivalentWeight = opts.EquivalentWeight
	if ix.equivalentWeight == 0 {
		ix.equivalentWeight = defaultEquivalentWeight
	}
	if ix.synonymWeight > 0 {
		ix.synonyms = newSynonymTable(append(slices.Clone(DefaultEquivalents), opts.ExtraEquivalents...), DefaultSynonyms, opts.ExtraSynonyms)
	} else {
		ix.synonyms = newSynonymTable(nil)
	}

	seen := make(map[string]bool, len(docs))
	unique := make([]*Doc, 0, len(docs))
	for i := range docs {
		if !seen[docs[i].ID] {
			seen[docs[i].ID] = true
			unique = append(unique, &docs[i])
		}
	}

	an := newAnalyzer()
	namespaceWords := namespaceWordsByPrefix(unique, an)
	groupIndex := map[string]int32{}
	groupDescriptions := map[int32]string{}
	fields := make([][numFields][]int32, len(unique))
	nameTerms := make([][]int32, len(unique))
	entries := make([]docEntry, len(unique))
	var groups []groupEntry
	var groupTools [][]int32 // by group, its docs
	var parts [][]int32
	for i, d := range unique {
		name := d.Name
		if name == "" {
			name = d.ID
		}
		f := &fields[i]
		var verb intentReader
		namespace := namespaceWords[d.Prefix]
		words := an.nameWords(name)
		for wi := range words {
			w := &words[wi]
			inNamespace := namespace[w.stem]
			if !inNamespace {
				verb.see(w.stem)
			}
			switch {
			case inNamespace:
				f[fieldServer] = append(f[fieldServer], an.nameTerm(w))
			case w.stop:
				// Kept in the name field, where a query's "this" can
				// tell ListUsageRecordThisMonth from ...Monthly, but
				// not among the words the name bonuses count.
				if w.long {
					f[fieldName] = append(f[fieldName], an.nameTerm(w))
				}
			default:
				t := an.nameTerm(w)
				nameTerms[i] = append(nameTerms[i], t)
				f[fieldName] = append(f[fieldName], t)
			}
		}
		f[fieldServer] = an.analyze(d.Prefix, f[fieldServer])
		f[fieldTitle] = an.analyze(d.Title, nil)
		f[fieldDescription] = an.analyze(d.Description, nil)
		// Each text's terms are shared (analyze); a field of many texts
		// is copied together once, not grown text by text.
		parts = parts[:0]
		for _, p := range d.Params {
			parts = append(parts, an.analyze(p.Name, nil))
		}
		f[fieldParamName] = an.concat(parts)
		parts = parts[:0]
		for _, p := range d.Params {
			parts = append(parts, an.analyze(p.Description, nil))
			for _, v := range p.Values {
				parts = append(parts, an.analyze(v, nil))
			}
		}
		f[fieldParamDescription] = an.concat(parts)
		entry := docEntry{intent: verb.intent}
		for _, g := range d.Groups {
			gi, ok := groupIndex[g.Name]
			if !ok {
				gi = int32(len(groups))
				groupIndex[g.Name] = gi
				groups = append(groups, groupEntry{name: g.Name})
				groupTools = append(groupTools, nil)
			}
			if groupDescriptions[gi] == "" {
				groupDescriptions[gi] = g.Description
			}
			if !slices.Contains(entry.groups, gi) {
				entry.groups = append(entry.groups, gi)
				groupTools[gi] = append(groupTools[gi], int32(i))
			}
		}
		entries[i] = entry
	}
	for gi := range groups {
		g := &groups[gi]
		g.ancestors = ancestry(g.name, opts.GroupParents)
		groupText := an.analyze(g.name+" "+groupDescriptions[int32(gi)], nil)
		for _, di := range groupTools[gi] {
			fields[di][fieldGroup] = append(fields[di][fieldGroup], groupText...)
		}
	}

	splitRareCompounds(nameTerms, fields, an)
	clusters := make([]int32, len(unique))
	clusterIDs := map[string]int32{}
	for i, d := range unique {
		id, ok := clusterIDs[d.Prefix]
		if !ok {
			id = int32(len(clusterIDs))
			clusterIDs[d.Prefix] = id
		}
		clusters[i] = id
	}
	for i := range entries {
		entries[i].server = clusters[i]
	}
	ix.serverMentions = findServerMentions(unique, fields, clusters, an)
	ix.terms = newTermTable(stemsByID(an.terms))
	ix.postings = buildPostings(fields, len(an.terms), clusters, &weights, tune.k1)
	ix.servers = len(clusterIDs)
	for i := range entries {
		entries[i].nameTerms = nameTerms[i]
	}
	ix.fillHot(entries)
	ix.nameDocs = nameDocs(entries, ix.postings.len())
	ids := make([]string, len(unique))
	for i, d := range unique {
		ids[i] = d.ID
	}
	ix.ids = newStringTable(ids)
	byName := make([]int32, len(groups))
	for i := range byName {
		byName[i] = int32(i)
	}
	slices.SortFunc(byName, func(a, b int32) int { return strings.Compare(groups[a].name, groups[b].name) })
	ix.groupRank = make([]int32, len(groups))
	for rank, g := range byName {
		ix.groupRank[g] = int32(rank)
	}
	ix.fillWithin(groups)
	groupNames := make([]string, len(groups))
	for gi, g := range groups {
		groupNames[gi] = g.name
	}
	ix.groupNames = newStringTable(groupNames)
	ix.byID = make([]int32, len(entries))
	for i := range ix.byID {
		ix.byID[i] = int32(i)
	}
	slices.SortFunc(ix.byID, func(a, b int32) int { return strings.Compare(ids[a], ids[b]) })
	ix.idRank = make([]int32, len(entries))
	for rank, d := range ix.byID {
		ix.idRank[d] = int32(rank)
	}

	// Groups are ranked on their own words too: a BM25 over name and
	// description, the name weighing double.
	groupAnalyzer := newAnalyzer()
	groupFields := make([][numFields][]int32, len(groups))
	for gi, g := range groups {
		groupFields[gi][fieldName] = groupAnalyzer.analyze(g.name, nil)
		groupFields[gi][fieldDescription] = groupAnalyzer.analyze(groupDescriptions[int32(gi)], nil)
	}
	ix.groupTerms = newTermTable(stemsByID(groupAnalyzer.terms))
	ix.groupPostings = buildPostings(groupFields, len(groupAnalyzer.terms), nil, &FieldWeights{Name: 2, Description: 1}, tune.k1)

	n, vocabulary, groupCount, servers, nameCount := len(entries), ix.postings.len(), len(groups), ix.servers, ix.hot.nameCount
	ix.scratch.New = func() any { return newScratch(n, vocabulary, groupCount, servers, nameCount) }
	return ix
}

// fillWithin lists, for each group name and ancestor name, the groups it
// holds, in group order.
func (ix *Index) fillWithin(groups []groupEntry) {
	ids := map[string]int32{}
	var names []string
	var counts []int32
	for _, g := range groups {
		for _, a := range g.ancestors {
			id, ok := ids[a]
			if !ok {
				id = int32(len(names))
				ids[a] = id
				names = append(names, a)
				counts = append(counts, 0)
			}
			counts[id]++
		}
	}
	within, fill := newFlatLists[int32](counts)
	for gi, g := range groups {
		for _, a := range g.ancestors {
			fill.put(ids[a], int32(gi))
		}
	}
	ix.withinNames, ix.within = newTermTable(names), within
}

// groupsWithin returns the groups a group name holds, itself included.
func (ix *Index) groupsWithin(name string) []int32 {
	id, ok := ix.withinNames.lookup(name)
	if !ok {
		return nil
	}
	return ix.within.of(id)
}

// nameDocs inverts the docs' name words: by term ID, the docs that have it
// in nameTerms, each once, in doc order.
func nameDocs(docs []docEntry, vocabulary int) flatLists[int32] {
	counts := make([]int32, vocabulary)
	last := make([]int32, vocabulary) // the last doc counted, plus one
	for d, e := range docs {
		for _, t := range e.nameTerms {
			if last[t] != int32(d)+1 {
				last[t] = int32(d) + 1
				counts[t]++
			}
		}
	}
	out, fill := newFlatLists[int32](counts)
	clear(last)
	for d, e := range docs {
		for _, t := range e.nameTerms {
			if last[t] != int32(d)+1 {
				last[t] = int32(d) + 1
				fill.put(t, int32(d))
			}
		}
	}
	return out
}

// hotDocs holds what a search reads of every doc it touches, by field
// rather than by doc (docEntry): a query over 20k tools touches most of
// them, and these arrays fit in a core's cache where docEntry does not.
type hotDocs struct {
	intent []intent
	server []int32
	// groupSet numbers each doc's set of groups (its groups and their
	// ancestors), and setGroups lists each set's groups: the docs of a
	// group share a set, so a search adds a run of them, as it meets them
	// in doc order, into their groups' evidence once (see findParsed).
	groupSet  []int32
	setGroups flatLists[int32]
	// namesAt and names are the docs' nameTerms, the same way.
	namesAt []int32
	names   []int32
	// nameID numbers the docs' distinct name word sequences: servers
	// mounted under several prefixes repeat their tool names, and a name
	// bonus depends on the name alone, so a search computes it once per
	// distinct name. nameCount counts them.
	nameID    []int32
	nameCount int
}

// fillHot copies into ix.hot what a search reads of each doc, every
// doc's groups and name words in one array each, in doc order: a search
// reads them for thousands of docs, mostly in doc order, and one small
// allocation per doc would scatter them in memory.
func (ix *Index) fillHot(docs []docEntry) {
	h := hotDocs{
		intent:   make([]intent, len(docs)),
		server:   make([]int32, len(docs)),
		groupSet: make([]int32, len(docs)),
		namesAt:  make([]int32, len(docs)+1),
		nameID:   make([]int32, len(docs)),
	}
	var groupSets, names sequenceIDs
	var sets [][]int32
	for d, e := range docs {
		h.intent[d], h.server[d] = e.intent, e.server
		set, added := groupSets.of(e.groups)
		if added {
			sets = append(sets, e.groups)
		}
		h.groupSet[d] = set
		h.names = append(h.names, e.nameTerms...)
		h.namesAt[d+1] = int32(len(h.names))
		h.nameID[d], _ = names.of(e.nameTerms)
	}
	h.nameCount = len(names.ids)
	counts := make([]int32, len(sets))
	for i, gs := range sets {
		counts[i] = int32(len(gs))
	}
	setGroups, fill := newFlatLists[int32](counts)
	for i, gs := range sets {
		for _, g := range gs {
			fill.put(int32(i), g)
		}
	}
	h.setGroups = setGroups
	ix.hot = h
}

// sequenceIDs numbers distinct sequences of IDs (a doc's groups, its name
// words) in the order they are first seen.
type sequenceIDs struct {
	ids map[string]int32
	key []byte
}

// of returns seq's number, and whether seq is new.
func (n *sequenceIDs) of(seq []int32) (id int32, added bool) {
	if n.ids == nil {
		n.ids = map[string]int32{}
	}
	n.key = n.key[:0]
	for _, v := range seq {
		n.key = binary.LittleEndian.AppendUint32(n.key, uint32(v))
	}
	if id, ok := n.ids[string(n.key)]; ok {
		return id, false
	}
	id = int32(len(n.ids))
	n.ids[string(n.key)] = id
	return id, true
}

// fixedPoint scales document frequencies to integers while summing them,
// so that the sum is exact and does not depend on the order of addition.
const fixedPoint = 1 << 20

// buildPostings computes BM25F: per doc and term, the field frequencies
// are length-normalised per field, weighted and summed, then saturated and
// multiplied by the term's IDF. It returns the postings by term ID.
//
// The IDF counts documents by cluster (a server's tools; cluster may be
// nil for none): a cluster of n docs counts √n, and a word in k of them
// counts √k. A catalog is made of servers that repeat their own phrasing
// in every tool ("Make a GET request to /2010-04-01/...", 197 times in
// Twilio), and plain document frequency would let one verbose server make
// "request" or "make" worthless for every other server's tools.
func buildPostings(fields [][numFields][]int32, vocabulary int, cluster []int32, weights *FieldWeights, k1 float64) flatLists[posting] {
	var avgLen [numFields]float64
	for _, fs := range fields {
		for f := range numFields {
			avgLen[f] += float64(len(fs[f]))
		}
	}
	for f := range numFields {
		avgLen[f] = max(avgLen[f]/float64(max(len(fields), 1)), 1)
	}
	clusterOf := func(di int) int32 {
		if cluster == nil {
			return int32(di)
		}
		return cluster[di]
	}

	// docFrequencies computes doc di's weighted, length-normalised
	// frequency of each of its terms into tf, listing the terms in
	// touched; the caller resets them.
	tf := make([]float64, vocabulary)
	var touched []int32
	docFrequencies := func(di int) {
		fs := &fields[di]
		for f := range numFields {
			w := weights.of(f)
			if w == 0 || len(fs[f]) == 0 {
				continue
			}
			b := lengthNormalization[f]
			share := w / (1 - b + b*float64(len(fs[f]))/avgLen[f])
			for _, t := range fs[f] {
				if tf[t] == 0 {
					touched = append(touched, t)
				}
				tf[t] += share
			}
		}
	}

	// Pass 1: how many docs hold each term, and the cluster-damped
	// document frequency, visiting docs cluster by cluster so that each
	// term's count per cluster is contiguous. It needs only which terms
	// a doc holds, not their frequencies: pass 2 computes those, which
	// costs less than holding a list per doc (tens of megabytes at
	// 20,000 tools).
	order := make([]int, len(fields))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(clusterOf(a) - clusterOf(b)) })
	counts := make([]int32, vocabulary)
	df := make([]int64, vocabulary)
	lastCluster := make([]int32, vocabulary)
	inCluster := make([]int32, vocabulary)
	lastDoc := make([]int32, vocabulary) // the last doc counted, plus one
	for t := range lastCluster {
		lastCluster[t] = -1
	}
	sqrtFixed := func(k int32) int64 { return int64(math.Round(math.Sqrt(float64(k)) * fixedPoint)) }
	var n int64
	prevCluster, clusterSize := int32(-1), int32(0)
	for _, di := range order {
		c := clusterOf(di)
		if c != prevCluster {
			if clusterSize > 0 {
				n += sqrtFixed(clusterSize)
			}
			prevCluster, clusterSize = c, 0
		}
		clusterSize++
		for f := range numFields {
			if weights.of(f) == 0 {
				continue
			}
			for _, t := range fields[di][f] {
				if lastDoc[t] == int32(di)+1 {
					continue
				}
				lastDoc[t] = int32(di) + 1
				counts[t]++
				if lastCluster[t] != c {
					if inCluster[t] > 0 {
						df[t] += sqrtFixed(inCluster[t])
					}
					lastCluster[t], inCluster[t] = c, 0
				}
				inCluster[t]++
			}
		}
	}
	if clusterSize > 0 {
		n += sqrtFixed(clusterSize)
	}
	for t := range vocabulary {
		if inCluster[t] > 0 {
			df[t] += sqrtFixed(inCluster[t])
		}
	}

	// Pass 2: postings, in doc order, with the whole BM25F contribution.
	total := float64(n) / fixedPoint
	idf := make([]float64, vocabulary)
	for t := range vocabulary {
		d := float64(df[t]) / fixedPoint
		idf[t] = math.Log(1 + (total-d+0.5)/(d+0.5))
	}
	postings, fill := newFlatLists[posting](counts)
	for di := range fields {
		docFrequencies(di)
		for _, t := range touched {
			fill.put(t, posting{
				doc:    int32(di),
				weight: float32(idf[t] * tf[t] / (k1 + tf[t])),
			})
			tf[t] = 0
		}
		touched = touched[:0]
	}
	return postings
}

// splitRareCompounds finds name words that are two catalog words run
// together ("heapsnapshot", "keyvault", "loadtesting") and indexes their
// parts as name words too, so "heap snapshot" and "key vault" find them.
// Only rare words (in at most two tools) are split: a common word such as
// "database" is a word in its own right, not "data" + "base".
func splitRareCompounds(nameTerms [][]int32, fields [][numFields][]int32, an *analyzer) {
	vocabulary := len(an.terms)
	docFreq := make([]int32, vocabulary)
	lastDoc := make([]int32, vocabulary)
	for t := range lastDoc {
		lastDoc[t] = -1
	}
	for di, fs := range fields {
		for f := range numFields {
			for _, t := range fs[f] {
				if lastDoc[t] != int32(di) {
					lastDoc[t] = int32(di)
					docFreq[t]++
				}
			}
		}
	}
	stems := make([]string, vocabulary)
	for s, t := range an.terms {
		stems[t] = s
	}
	known := func(stem string) bool {
		t, ok := an.terms[stem]
		return ok && int(t) < vocabulary && docFreq[t] > 0
	}
	for di := range fields {
		var core []int32
		for _, t := range nameTerms[di] {
			if s := stems[t]; len(s) >= 6 && docFreq[t] <= 2 {
				if left, right, ok := splitCompound(s, known, an.stem); ok {
					l, r := an.intern(left), an.intern(right)
					fields[di][fieldName] = append(fields[di][fieldName], l, r)
					core = append(core, l, r)
					continue
				}
			}
			core = append(core, t)
		}
		nameTerms[di] = core
	}
}

// serverMention says that a word names a server: the share of the tools
// using the word anywhere that belong to that server.
type serverMention struct {
	server int32
	purity float64
}

// findServerMentions finds the words that name a server: the words of its
// prefix ("github", "hubspot", "twilio") that are mostly
// used by that server's own tools. A word that other servers use as much
// ("search" in brave-search, "postgres", which Supabase and Heroku speak
// of too) does not point at one server and is left out.
func findServerMentions(docs []*Doc, fields [][numFields][]int32, clusters []int32, an *analyzer) map[int32]serverMention {
	const (
		notCandidate = -2
		shared       = -1 // in two servers' names: names neither
	)
	// server[t] is the server whose prefix holds term t.
	server := make([]int32, len(an.terms))
	for t := range server {
		server[t] = notCandidate
	}
	stems := map[int32]string{}
	for i, d := range docs {
		c := clusters[i]
		splitWords(d.Prefix, func(w string) {
			aw := an.word(w)
			if aw.stop || len(w) < 3 {
				return
			}
			t, ok := an.terms[aw.stem]
			if !ok {
				return
			}
			switch server[t] {
			case notCandidate:
				server[t], stems[t] = c, aw.stem
			case c, shared:
			default:
				server[t] = shared
			}
		})
	}
	// Count, per candidate, the tools using it anywhere and those of its
	// own server among them.
	inServer := make([]int32, len(server))
	total := make([]int32, len(server))
	lastDoc := make([]int32, len(server))
	for i := range docs {
		for f := range numFields {
			for _, t := range fields[i][f] {
				if server[t] < 0 || lastDoc[t] == int32(i)+1 {
					continue
				}
				lastDoc[t] = int32(i) + 1
				total[t]++
				if server[t] == clusters[i] {
					inServer[t]++
				}
			}
		}
	}
	out := map[int32]serverMention{}
	for t := range stems {
		if server[t] < 0 || total[t] == 0 {
			continue
		}
		if purity := float64(inServer[t]) / float64(total[t]); purity >= minServerPurity {
			out[t] = serverMention{server: server[t], purity: purity}
		}
	}
	return out
}

// minServerPurity is the share of a word's tools that must belong to one
// server for the word to name that server.
const minServerPurity = 0.5

// namespaceWordsByPrefix finds, per server prefix, the name words that at
// least four in five of that server's tools share ("browser" in
// playwright's browser_click, "twilio api v2010" in
// TwilioApiV2010--CreateCall). They name the server, not the action, so
// they are indexed with the prefix and left out of the name bonuses.
func namespaceWordsByPrefix(docs []*Doc, an *analyzer) map[string]map[string]bool {
	type tally struct {
		tools int
		words map[string]int
	}
	byPrefix := map[string]*tally{}
	for _, d := range docs {
		t := byPrefix[d.Prefix]
		if t == nil {
			t = &tally{words: map[string]int{}}
			byPrefix[d.Prefix] = t
		}
		t.tools++
		name := d.Name
		if name == "" {
			name = d.ID
		}
		words := an.nameWords(name)
		for wi, w := range words {
			if !w.stop && !slices.ContainsFunc(words[:wi], func(o nameWord) bool { return !o.stop && o.stem == w.stem }) {
				t.words[w.stem]++
			}
		}
	}
	out := map[string]map[string]bool{}
	for prefix, t := range byPrefix {
		if t.tools < 4 {
			continue // too few tools to tell a namespace from a theme
		}
		for w, c := range t.words {
			if 5*c >= 4*t.tools {
				if out[prefix] == nil {
					out[prefix] = map[string]bool{}
				}
				out[prefix][w] = true
			}
		}
	}
	return out
}

// ancestry lists a group and its ancestors, from GroupParents and from
// dotted names, guarding against cycles.
func ancestry(name string, parents map[string]string) []string {
	out := []string{name}
	seen := map[string]bool{name: true}
	for cur := name; ; {
		next, ok := parents[cur]
		if !ok {
			if i := strings.LastIndexByte(cur, '.'); i > 0 {
				next, ok = cur[:i], true
			}
		}
		if !ok || seen[next] {
			return out
		}
		seen[next] = true
		out = append(out, next)
		cur = next
	}
}

// Len returns the number of tools in the index.
func (ix *Index) Len() int { return len(ix.hot.intent) }

// id returns doc d's ID.
func (ix *Index) id(d int32) string { return ix.ids.get(d) }

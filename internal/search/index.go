package search

import (
	"math"
	"sort"
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
	// GroupParents maps a group to its parent group, so that the Group
	// filter of a search also matches the group's descendants. Dotted
	// names ("code.repos" under "code") need no entry.
	GroupParents map[string]string
}

const defaultSynonymWeight = 0.5

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

type docEntry struct {
	id     string
	groups []int32 // indexes into Index.groups
	// nameStems are the distinctive words of the tool's name in order, for
	// the adjacency and coverage bonuses.
	nameStems []string
}

type groupEntry struct {
	name      string
	ancestors []string // the group itself first, then its parents upward
	tools     []int32
}

// Index is an immutable ranking index over a tool catalog. Build it with
// New; it is safe for concurrent use.
type Index struct {
	docs          []docEntry
	postings      map[string][]posting
	groups        []groupEntry
	groupPostings map[string][]posting // over groups' own names and descriptions
	synonyms      *synonymTable
	synonymWeight float64
	tune          tuning
	scratch       sync.Pool // *scratch, reused across queries
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
		postings:      map[string][]posting{},
		groupPostings: map[string][]posting{},
		synonymWeight: opts.SynonymWeight,
		tune:          tune,
	}
	if ix.synonymWeight == 0 {
		ix.synonymWeight = defaultSynonymWeight
	}
	if ix.synonymWeight > 0 {
		ix.synonyms = newSynonymTable(DefaultSynonyms, opts.ExtraSynonyms)
	} else {
		ix.synonyms = newSynonymTable()
	}

	seen := make(map[string]bool, len(docs))
	unique := make([]*Doc, 0, len(docs))
	for i := range docs {
		if !seen[docs[i].ID] {
			seen[docs[i].ID] = true
			unique = append(unique, &docs[i])
		}
	}

	namespaceWords := namespaceWordsByPrefix(unique)
	groupIndex := map[string]int32{}
	groupDescriptions := map[int32]string{}
	fieldStems := make([][numFields][]string, len(unique))
	ix.docs = make([]docEntry, len(unique))
	for i, d := range unique {
		name := d.Name
		if name == "" {
			name = d.ID
		}
		var nameStems, nameField, server []string
		splitWords(name, func(w string) {
			s := stem(w)
			switch {
			case namespaceWords[d.Prefix][s]:
				server = append(server, s)
			case isStopWord(w):
				// Kept in the name field, where a query's "this" can
				// tell ListUsageRecordThisMonth from ...Monthly, but
				// not among the words the name bonuses count.
				if len(w) > 1 {
					nameField = append(nameField, s)
				}
			default:
				nameStems = append(nameStems, s)
				nameField = append(nameField, s)
			}
		})
		server = append(server, analyze(d.Prefix)...)
		f := &fieldStems[i]
		f[fieldName] = nameField
		f[fieldServer] = server
		f[fieldTitle] = analyze(d.Title)
		f[fieldDescription] = analyze(d.Description)
		for _, p := range d.Params {
			f[fieldParamName] = append(f[fieldParamName], analyze(p.Name)...)
			f[fieldParamDescription] = append(f[fieldParamDescription], analyze(p.Description)...)
			for _, v := range p.Values {
				f[fieldParamDescription] = append(f[fieldParamDescription], analyze(v)...)
			}
		}
		entry := docEntry{id: d.ID, nameStems: nameStems}
		for _, g := range d.Groups {
			gi, ok := groupIndex[g.Name]
			if !ok {
				gi = int32(len(ix.groups))
				groupIndex[g.Name] = gi
				ix.groups = append(ix.groups, groupEntry{name: g.Name})
			}
			if groupDescriptions[gi] == "" {
				groupDescriptions[gi] = g.Description
			}
			if !containsInt32(entry.groups, gi) {
				entry.groups = append(entry.groups, gi)
				ix.groups[gi].tools = append(ix.groups[gi].tools, int32(i))
			}
		}
		ix.docs[i] = entry
	}
	for gi := range ix.groups {
		g := &ix.groups[gi]
		g.ancestors = ancestry(g.name, opts.GroupParents)
		groupText := analyze(g.name + " " + groupDescriptions[int32(gi)])
		for _, di := range g.tools {
			fieldStems[di][fieldGroup] = append(fieldStems[di][fieldGroup], groupText...)
		}
	}

	splitRareCompounds(ix.docs, fieldStems)
	clusters := make([]int, len(unique))
	clusterIDs := map[string]int{}
	for i, d := range unique {
		id, ok := clusterIDs[d.Prefix]
		if !ok {
			id = len(clusterIDs)
			clusterIDs[d.Prefix] = id
		}
		clusters[i] = id
	}
	ix.postings = buildPostings(fieldStems, clusters, &weights, tune.k1)

	// Groups are ranked on their own words too: a one-field BM25 over
	// name and description, the name counted twice.
	groupFields := make([][numFields][]string, len(ix.groups))
	for gi, g := range ix.groups {
		name := analyze(g.name)
		groupFields[gi][fieldName] = name
		groupFields[gi][fieldDescription] = analyze(groupDescriptions[int32(gi)])
	}
	ix.groupPostings = buildPostings(groupFields, nil, &FieldWeights{Name: 2, Description: 1}, tune.k1)

	n := len(ix.docs)
	ix.scratch.New = func() any { return newScratch(n) }
	return ix
}

// buildPostings computes BM25F: per doc and stem, the field frequencies
// are length-normalised per field, weighted and summed, then saturated and
// multiplied by the stem's IDF.
//
// The IDF counts documents by cluster (a server's tools; cluster may be
// nil for none): a cluster of n docs counts √n, and a word in k of them
// counts √k. A catalog is made of servers that repeat their own phrasing
// in every tool ("Make a GET request to /2010-04-01/...", 197 times in
// Twilio), and plain document frequency would let one verbose server make
// "request" or "make" worthless for every other server's tools.
func buildPostings(fieldStems [][numFields][]string, cluster []int, weights *FieldWeights, k1 float64) map[string][]posting {
	var avgLen [numFields]float64
	for _, fs := range fieldStems {
		for f := range numFields {
			avgLen[f] += float64(len(fs[f]))
		}
	}
	for f := range numFields {
		avgLen[f] = max(avgLen[f]/float64(max(len(fieldStems), 1)), 1)
	}

	type weighted struct {
		stem string
		tf   float64
	}
	perDoc := make([][]weighted, len(fieldStems))
	clusterOf := func(di int) int {
		if cluster == nil {
			return di
		}
		return cluster[di]
	}
	// Per stem, the clusters it occurs in (in first-seen order) and how
	// many of each cluster's docs hold it. Sums below run in this fixed
	// order: float addition is not associative, and map order would make
	// two builds of the same catalog rank ties differently.
	type clusterCount struct{ cluster, docs int }
	occurrences := map[string][]clusterCount{}
	occurrenceIndex := map[string]map[int]int{} // stem → cluster → index in occurrences
	var clusterSizes []int
	for di, fs := range fieldStems {
		c := clusterOf(di)
		for len(clusterSizes) <= c {
			clusterSizes = append(clusterSizes, 0)
		}
		clusterSizes[c]++
		tf := map[string]float64{}
		for f := range numFields {
			w := weights.of(f)
			if w == 0 || len(fs[f]) == 0 {
				continue
			}
			b := lengthNormalization[f]
			norm := 1 - b + b*float64(len(fs[f]))/avgLen[f]
			for _, s := range fs[f] {
				tf[s] += w / norm
			}
		}
		list := make([]weighted, 0, len(tf))
		for s, v := range tf {
			list = append(list, weighted{s, v})
		}
		sort.Slice(list, func(a, b int) bool { return list[a].stem < list[b].stem })
		for _, w := range list {
			idx := occurrenceIndex[w.stem]
			if idx == nil {
				idx = map[int]int{}
				occurrenceIndex[w.stem] = idx
			}
			if i, ok := idx[c]; ok {
				occurrences[w.stem][i].docs++
			} else {
				idx[c] = len(occurrences[w.stem])
				occurrences[w.stem] = append(occurrences[w.stem], clusterCount{cluster: c, docs: 1})
			}
		}
		perDoc[di] = list
	}

	n := 0.0
	for _, size := range clusterSizes {
		n += math.Sqrt(float64(size))
	}
	docFreq := make(map[string]float64, len(occurrences))
	for stem, occ := range occurrences {
		df := 0.0
		for _, o := range occ {
			df += math.Sqrt(float64(o.docs))
		}
		docFreq[stem] = df
	}
	postings := make(map[string][]posting, len(docFreq))
	for di, list := range perDoc {
		for _, w := range list {
			df := docFreq[w.stem]
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			postings[w.stem] = append(postings[w.stem], posting{
				doc:    int32(di),
				weight: float32(idf * w.tf / (k1 + w.tf)),
			})
		}
	}
	return postings
}

// splitRareCompounds finds name words that are two catalog words run
// together ("heapsnapshot", "keyvault", "loadtesting") and indexes their
// parts as name words too, so "heap snapshot" and "key vault" find them.
// Only rare words (in at most two tools) are split: a common word such as
// "database" is a word in its own right, not "data" + "base".
func splitRareCompounds(docs []docEntry, fieldStems [][numFields][]string) {
	docFreq := map[string]int{}
	for _, fs := range fieldStems {
		seen := map[string]bool{}
		for f := range numFields {
			for _, s := range fs[f] {
				if !seen[s] {
					seen[s] = true
					docFreq[s]++
				}
			}
		}
	}
	for di := range fieldStems {
		name := fieldStems[di][fieldName]
		var parts []string
		var core []string
		for _, s := range docs[di].nameStems {
			if docFreq[s] <= 2 {
				if left, right, ok := splitCompound(s, docFreq); ok {
					parts = append(parts, left, right)
					core = append(core, left, right)
					continue
				}
			}
			core = append(core, s)
		}
		fieldStems[di][fieldName] = append(name, parts...)
		docs[di].nameStems = core
	}
}

// namespaceWordsByPrefix finds, per server prefix, the name words that at
// least four in five of that server's tools share ("browser" in playwright's
// browser_click, "twilio api v2010" in TwilioApiV2010--CreateCall). They
// name the server, not the action, so they are indexed with the prefix
// and left out of the name bonuses.
func namespaceWordsByPrefix(docs []*Doc) map[string]map[string]bool {
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
		seen := map[string]bool{}
		for _, s := range analyze(name) {
			if !seen[s] {
				seen[s] = true
				t.words[s]++
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

func containsInt32(list []int32, v int32) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Len returns the number of tools in the index.
func (ix *Index) Len() int { return len(ix.docs) }

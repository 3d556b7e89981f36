package search

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// evalGoals are the goals per phrasing. Human-phrased requests (issue
// 4): the right tool first for at least 75% of requests, in the top five
// for 95%. Agent-phrased ones (issue 15), as a model writes find_tools
// queries: 95% first, 99% in the top five.
var evalGoals = [...][2]float64{ // phrasing → {recall@1, recall@5}
	human:      {0.75, 0.95},
	agentFirst: {0.95, 0.99},
	agentFused: {0.95, 0.99},
}

// evalFloors are what TestRecallGoals enforces per set and phrasing. The
// human-phrased floors sit just under what the method reached when they
// were set; the agent-phrased ones (issue 15) at what it reaches, so that
// losing one request fails. Raise them as the method improves; never
// lower them to let a change through.
var evalFloors = map[string][len(phrasings)][2]float64{ // file → phrasing → {recall@1, recall@5}
	"eval.json": {
		human:      {0.79, 0.94},   // reaches 0.799, 0.950 (170 of 179: 0.9497)
		agentFirst: {0.955, 0.994}, // 171, 178 of 179
		agentFused: {0.977, 1},     // 175, 179 of 179
	},
	"eval_holdout.json": {
		human:      {0.76, 0.92}, // reaches 0.765, 0.929
		agentFirst: {0.958, 1},   // 163, 170 of 170
		agentFused: {0.929, 1},   // 158, 170 of 170: the goal's 0.95 is not met
	},
	"eval_holdout2.json": {
		human:      {0.64, 0.87}, // reaches 0.650, 0.872
		agentFirst: {0.954, 1},   // 254, 266 of 266
		agentFused: {0.951, 1},   // 253, 266 of 266
	},
	"eval_holdout3.json": {
		human:      {0.41, 0.66}, // reaches 0.418, 0.665
		agentFirst: {0.954, 1},   // 251, 263 of 263
		agentFused: {0.958, 1},   // 252, 263 of 263
	},
}

// evalCase is one request and the tools that serve it; finding any of them
// counts as success. Phrasings are the agent-phrased companion's
// rephrasings of the request (testdata/<set>.agent.json), when loaded.
type evalCase struct {
	Query     string   `json:"query"`
	Expect    []string `json:"expect"`
	Phrasings []string `json:"-"`
}

func loadEval(tb testing.TB, name string) []evalCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []evalCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return cases
}

// agentFile names the agent-phrased companion of an evaluation file.
func agentFile(name string) string { return strings.TrimSuffix(name, ".json") + ".agent.json" }

// loadEvalWithAgent loads a set and joins its agent-phrased companion by
// position, checking that each entry rephrases the request at its place.
func loadEvalWithAgent(tb testing.TB, name string) []evalCase {
	tb.Helper()
	cases := loadEval(tb, name)
	companion := agentFile(name)
	data, err := os.ReadFile(filepath.Join("testdata", companion))
	if err != nil {
		tb.Fatal(err)
	}
	var agent []struct {
		Query     string   `json:"query"`
		Phrasings []string `json:"phrasings"`
	}
	if err := json.Unmarshal(data, &agent); err != nil {
		tb.Fatalf("%s: %v", companion, err)
	}
	if len(agent) != len(cases) {
		tb.Fatalf("%s has %d entries, %s has %d: the companion must follow the set one for one", companion, len(agent), name, len(cases))
	}
	for i, a := range agent {
		if a.Query != cases[i].Query {
			tb.Fatalf("%s entry %d rephrases %q, but %s has %q there", companion, i, a.Query, name, cases[i].Query)
		}
		if len(a.Phrasings) == 0 {
			tb.Fatalf("%s entry %d (%q) has no phrasings", companion, i, a.Query)
		}
		cases[i].Phrasings = a.Phrasings
	}
	return cases
}

// phrasing says which wording of a request an evaluation sends.
type phrasing int

const (
	human      phrasing = iota // the request as a person wrote it
	agentFirst                 // the agent's first phrasing alone
	agentFused                 // every agent phrasing, in one FindPhrasings call
)

// phrasings lists every phrasing, in report order.
var phrasings = [...]phrasing{human, agentFirst, agentFused}

var phrasingNames = [...]string{human: "human", agentFirst: "agent-1st", agentFused: "agent-fused"}

func (p phrasing) String() string { return phrasingNames[p] }

// queries is what one evaluation of the case sends as find_tools' phrasings.
func (c evalCase) queries(p phrasing) []string {
	switch p {
	case agentFirst:
		return c.Phrasings[:1]
	case agentFused:
		return c.Phrasings
	}
	return []string{c.Query}
}

// evalResult is recall@1 and recall@5 of one set, with the misses at 5 and
// the requests whose right tool was found but not first.
type evalResult struct {
	cases    int
	at1, at5 int
	// groupAt5 counts requests for which a group holding an expected
	// tool is among the five groups find_tools returns: the model can
	// still reach the tool by searching or browsing that group.
	groupAt5       int
	missesAt5      []string
	notFirst       []string
	unknownExpects []string
}

func (r evalResult) recall1() float64 { return float64(r.at1) / float64(max(r.cases, 1)) }
func (r evalResult) recall5() float64 { return float64(r.at5) / float64(max(r.cases, 1)) }
func (r evalResult) groupRecall5() float64 {
	return float64(r.groupAt5) / float64(max(r.cases, 1))
}

func runEval(ix *Index, known map[string]bool, cases []evalCase, p phrasing) evalResult {
	r := evalResult{cases: len(cases)}
	for _, c := range cases {
		for _, e := range c.Expect {
			if !known[e] {
				r.unknownExpects = append(r.unknownExpects, fmt.Sprintf("%q expects unknown tool %s", c.Query, e))
			}
		}
		hits, groups := ix.FindPhrasings(c.queries(p), &SearchOptions{Limit: 5})
		for _, g := range groups {
			if slices.ContainsFunc(c.Expect, func(id string) bool { return ix.inGroup(id, g.Name) }) {
				r.groupAt5++
				break
			}
		}
		rank := -1
		for i, h := range hits {
			if slices.Contains(c.Expect, h.ID) {
				rank = i
				break
			}
		}
		switch {
		case rank == 0:
			r.at1++
			r.at5++
		case rank > 0:
			r.at5++
			r.notFirst = append(r.notFirst, describeMiss(c, p, hits, rank))
		default:
			r.missesAt5 = append(r.missesAt5, describeMiss(c, p, hits, rank))
		}
	}
	return r
}

func describeMiss(c evalCase, p phrasing, hits []Hit, rank int) string {
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s (%.2f)", h.ID, h.Score))
	}
	where := "not in top 5"
	if rank >= 0 {
		where = fmt.Sprintf("rank %d", rank+1)
	}
	asked := fmt.Sprintf("%q", c.Query)
	if p != human {
		asked = fmt.Sprintf("%q (for %q)", strings.Join(c.queries(p), `" + "`), c.Query)
	}
	return fmt.Sprintf("%s: want %s, %s; got %s", asked, strings.Join(c.Expect, " | "), where, strings.Join(got, ", "))
}

func knownIDs(docs []Doc) map[string]bool {
	m := make(map[string]bool, len(docs))
	for _, d := range docs {
		m[d.ID] = true
	}
	return m
}

// evalSets are the evaluation files, in the order they are reported:
// dev is the tuning set; holdout was seen once by a previous round of
// tuning; holdout2 was written before the current method and is measured
// only; holdout3 was written by a second engineer who saw neither the
// method nor the other sets (README: Evaluation), the fairest measure of
// requests the method has not seen.
var evalSets = []string{"eval.json", "eval_holdout.json", "eval_holdout2.json", "eval_holdout3.json"}

// evalSetName is the short label of an evaluation file in reports.
func evalSetName(file string) string {
	return strings.TrimSuffix(strings.TrimPrefix(file, "eval_"), ".json")
}

// TestRecallGoals fails when the ranking falls below the floor on any
// evaluation set in any phrasing, and reports each. It prints the dev
// set's misses only: held-out misses that are read become tuning data.
func TestRecallGoals(t *testing.T) {
	docs := loadCatalogs(t)
	ix := New(docs, nil)
	known := knownIDs(docs)
	var all []evalCase
	for _, file := range evalSets {
		cases := loadEvalWithAgent(t, file)
		all = append(all, cases...)
		for _, p := range phrasings {
			r := runEval(ix, known, cases, p)
			t.Logf("%-9s %-11s %3d requests  recall@1 %.3f  recall@5 %.3f  group@5 %.3f", evalSetName(file), p, r.cases, r.recall1(), r.recall5(), r.groupRecall5())
			if p == human && len(r.unknownExpects) > 0 {
				t.Errorf("%s names tools the catalogs do not have:\n%s", file, strings.Join(r.unknownExpects, "\n"))
			}
			if floor := evalFloors[file][p]; r.recall1() < floor[0] || r.recall5() < floor[1] {
				t.Errorf("%s, %s: recall@1 %.3f, recall@5 %.3f fell below the floor (%.2f, %.2f)",
					file, p, r.recall1(), r.recall5(), floor[0], floor[1])
			}
			if goal := evalGoals[p]; r.recall1() < goal[0] || r.recall5() < goal[1] {
				t.Logf("%s, %s: goals (%.2f, %.2f) not yet met", file, p, goal[0], goal[1])
			}
			if file != "eval.json" {
				continue // held-out misses stay unseen, or they become tuning data
			}
			if len(r.missesAt5) > 0 || len(r.notFirst) > 0 {
				t.Logf("%s, %s, misses at 5:\n  %s\nfound but not first:\n  %s", file, p,
					strings.Join(r.missesAt5, "\n  "), strings.Join(r.notFirst, "\n  "))
			}
		}
	}
	for _, p := range phrasings {
		r := runEval(ix, known, all, p)
		t.Logf("%-9s %-11s %3d requests  recall@1 %.3f  recall@5 %.3f  group@5 %.3f", "all", p, r.cases, r.recall1(), r.recall5(), r.groupRecall5())
	}
}

// TestEvalSetShape keeps the evaluation sets honest: each big enough and
// spread over enough servers, no request in two sets, and each agent-phrased
// companion following its set one for one with two phrasings a request.
func TestEvalSetShape(t *testing.T) {
	queries := map[string]string{}
	for _, name := range evalSets {
		cases := loadEvalWithAgent(t, name)
		for _, c := range cases {
			if len(c.Phrasings) != 2 || slices.ContainsFunc(c.Phrasings, func(p string) bool { return strings.TrimSpace(p) == "" }) {
				t.Errorf("%s: %q has phrasings %q, want two non-blank ones", agentFile(name), c.Query, c.Phrasings)
			}
		}
		if len(cases) < 150 {
			t.Errorf("%s has %d requests, want at least 150", name, len(cases))
		}
		servers := map[string]bool{}
		for _, c := range cases {
			if len(c.Expect) == 0 {
				t.Errorf("%s: %q expects no tool", name, c.Query)
			}
			if other, dup := queries[c.Query]; dup {
				t.Errorf("%q appears in %s and %s", c.Query, other, name)
			}
			queries[c.Query] = name
			for _, e := range c.Expect {
				server, _, _ := strings.Cut(e, "__")
				servers[server] = true
			}
		}
		if len(servers) < 25 {
			t.Errorf("%s covers %d servers, want at least 25", name, len(servers))
		}
	}
}

// TestEvalDevReport prints the dev half's misses; it is the loop to run
// while improving the method (TOOLFOLD_EVAL_REPORT=1 go test -run
// EvalDevReport -v). The held-out half is deliberately not printed here.
func TestEvalDevReport(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_REPORT") == "" {
		t.Skip("set TOOLFOLD_EVAL_REPORT=1 to print the dev half's misses")
	}
	docs := loadCatalogs(t)
	ix, known, dev := New(docs, nil), knownIDs(docs), loadEvalWithAgent(t, "eval.json")
	for _, p := range phrasings {
		r := runEval(ix, known, dev, p)
		t.Logf("dev, %s: recall@1 %.3f  recall@5 %.3f", p, r.recall1(), r.recall5())
		t.Logf("misses at 5:\n  %s", strings.Join(r.missesAt5, "\n  "))
		t.Logf("found but not first:\n  %s", strings.Join(r.notFirst, "\n  "))
	}
}

// BenchmarkRecall reports recall@1, recall@5 and group@5 of each set in
// each phrasing as benchmark metrics.
func BenchmarkRecall(b *testing.B) {
	docs := loadCatalogs(b)
	known := knownIDs(docs)
	ix := New(docs, nil)
	sets := make([][]evalCase, len(evalSets))
	for i, file := range evalSets {
		sets[i] = loadEvalWithAgent(b, file)
	}
	results := make([][len(phrasings)]evalResult, len(sets))
	for b.Loop() {
		for i, cases := range sets {
			for j, p := range phrasings {
				results[i][j] = runEval(ix, known, cases, p)
			}
		}
	}
	for i, file := range evalSets {
		for j, p := range phrasings {
			name := evalSetName(file) + "-" + p.String()
			b.ReportMetric(results[i][j].recall1(), name+"-recall@1")
			b.ReportMetric(results[i][j].recall5(), name+"-recall@5")
			b.ReportMetric(results[i][j].groupRecall5(), name+"-group@5")
		}
	}
}

// inGroup reports whether the tool with this ID is in the group or one of
// its descendants (a test helper: linear in the catalog).
func (ix *Index) inGroup(id, group string) bool {
	for d := range int32(ix.Len()) {
		if ix.id(d) != id {
			continue
		}
		within := ix.groupsWithin(group)
		for _, g := range ix.hot.setGroups.of(ix.hot.groupSet[d]) {
			if slices.Contains(within, g) {
				return true
			}
		}
	}
	return false
}

package search

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// TestTuningSweep varies one ranking constant or field weight at a time
// around the defaults and prints recall on the dev half only; it is how the
// defaults were chosen (TOOLFOLD_EVAL_SWEEP=1 go test -run TuningSweep -v).
func TestTuningSweep(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_SWEEP") == "" {
		t.Skip("set TOOLFOLD_EVAL_SWEEP=1 to sweep the ranking constants on the dev half")
	}
	docs := loadCatalogs(t, catalogsDir(t))
	known := knownIDs(docs)
	dev := loadEval(t, "eval.json")
	type variant struct {
		name   string
		tune   func(*tuning)
		weight func(*FieldWeights)
		synW   float64
	}
	var variants []variant
	for _, v := range []float64{0.6, 0.9, 1.2, 1.6, 2.2} {
		variants = append(variants, variant{name: "k1=" + ftoa(v), tune: func(t *tuning) { t.k1 = v }})
	}
	for _, v := range []float64{0.1, 0.25, 0.35, 0.5, 0.7} {
		variants = append(variants, variant{name: "coord=" + ftoa(v), tune: func(t *tuning) { t.coordinationFloor = v }})
	}
	for _, v := range []float64{0, 0.25, 0.5, 0.8, 1.2} {
		variants = append(variants, variant{name: "nameCov=" + ftoa(v), tune: func(t *tuning) { t.nameCoverageBonus = v }})
	}
	for _, v := range []float64{1, 1.5, 2} {
		variants = append(variants, variant{name: "covBoost=" + ftoa(v), tune: func(t *tuning) { t.coverageBoost = v }})
	}
	for _, v := range []float64{0, 0.15, 0.3} {
		variants = append(variants, variant{name: "adj=" + ftoa(v), tune: func(t *tuning) { t.adjacencyBonus = v }})
	}
	for _, v := range []float64{0, 0.2, 0.4, 0.7} {
		variants = append(variants, variant{name: "hint=" + ftoa(v), tune: func(t *tuning) { t.hintWeight = v }})
	}
	for _, v := range []float64{0, 0.15, 0.3, 0.5} {
		variants = append(variants, variant{name: "plural=" + ftoa(v), tune: func(t *tuning) { t.pluralListWeight = v }})
	}
	for _, v := range []float64{0.3, 0.5, 0.7} {
		variants = append(variants, variant{name: "syn=" + ftoa(v), synW: v})
	}
	fields := []struct {
		name string
		ptr  func(*FieldWeights) *float64
	}{
		{"name", func(w *FieldWeights) *float64 { return &w.Name }},
		{"server", func(w *FieldWeights) *float64 { return &w.Server }},
		{"title", func(w *FieldWeights) *float64 { return &w.Title }},
		{"desc", func(w *FieldWeights) *float64 { return &w.Description }},
		{"pname", func(w *FieldWeights) *float64 { return &w.ParamName }},
		{"pdesc", func(w *FieldWeights) *float64 { return &w.ParamDescription }},
	}
	for _, f := range fields {
		for _, m := range []float64{0.5, 0.75, 1.5, 2} {
			variants = append(variants, variant{name: f.name + "×" + ftoa(m), weight: func(w *FieldWeights) { *f.ptr(w) *= m }})
		}
	}
	for _, v := range append([]variant{{name: "defaults"}}, variants...) {
		tune := defaultTuning
		if v.tune != nil {
			v.tune(&tune)
		}
		weights := DefaultWeights
		if v.weight != nil {
			v.weight(&weights)
		}
		r := runEval(newIndex(docs, &Options{Weights: &weights, SynonymWeight: v.synW}, tune), known, dev)
		t.Logf("%-14s recall@1 %.3f  recall@5 %.3f", v.name, r.recall1(), r.recall5())
	}
}

func ftoa(f float64) string { return fmt.Sprintf("%g", f) }

// TestVocabularySweep varies the WordNet tier and the pseudo-relevance
// feedback on the dev half only (TOOLFOLD_EVAL_SWEEP=1 go test -run
// VocabularySweep -v).
func TestVocabularySweep(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_SWEEP") == "" {
		t.Skip("set TOOLFOLD_EVAL_SWEEP=1 to sweep the vocabulary expansions on the dev half")
	}
	docs := loadCatalogs(t, catalogsDir(t))
	known := knownIDs(docs)
	dev := loadEval(t, "eval.json")
	type variant struct {
		name string
		tune func(*tuning)
	}
	// Every variant but the defaults starts from the WordNet tier on at 0.3.
	variants := []variant{{"wordnet 0.3", nil}}
	for _, w := range []float64{0.1, 0.2, 0.25, 0.3, 0.35, 0.45} {
		variants = append(variants, variant{"wordnet=" + ftoa(w), func(t *tuning) { t.wordNetWeight = w }})
	}
	for _, n := range []int{2, 4, 16, 64} {
		variants = append(variants, variant{"links=" + ftoa(float64(n)), func(t *tuning) { t.wordNetMaxLinks = n }})
	}
	variants = append(variants,
		variant{"coordination 0.3", func(t *tuning) { t.wordNetCoordination = true }},
		variant{"unknown only", func(t *tuning) { t.wordNetMaxDocs = 0 }},
		variant{"unknown only 0.5", func(t *tuning) { t.wordNetMaxDocs, t.wordNetWeight = 0, 0.5 }},
		variant{"rare≤2", func(t *tuning) { t.wordNetMaxDocs = 2 }},
		variant{"rare≤5", func(t *tuning) { t.wordNetMaxDocs = 5 }},
		variant{"rare≤10", func(t *tuning) { t.wordNetMaxDocs = 10 }},
		variant{"rare≤5 syn+broad+der", func(t *tuning) {
			t.wordNetMaxDocs, t.wordNetKinds = 5, 1<<wnSynonym|1<<wnBroader|1<<wnDerived
		}},
		variant{"rare≤5 w0.5", func(t *tuning) { t.wordNetMaxDocs, t.wordNetWeight = 5, 0.5 }},
	)
	kindNames := []string{"synonym", "broader", "derived", "narrower"}
	for k := range numWordNetKinds {
		variants = append(variants, variant{"only " + kindNames[k], func(t *tuning) { t.wordNetKinds = 1 << k }})
		variants = append(variants, variant{"without " + kindNames[k], func(t *tuning) { t.wordNetKinds &^= 1 << k }})
	}
	for _, v := range append([]variant{{"defaults", nil}}, variants...) {
		tune := defaultTuning
		if v.name != "defaults" {
			tune.wordNetWeight = 0.3
		}
		if v.tune != nil {
			v.tune(&tune)
		}
		r := runEval(newIndex(docs, nil, tune), known, dev)
		t.Logf("%-20s recall@1 %.3f  recall@5 %.3f", v.name, r.recall1(), r.recall5())
	}
}

// TestVocabularyDevDiff prints the dev requests whose rank changes when the
// expansions are on (TOOLFOLD_EVAL_SWEEP=1 go test -run VocabularyDevDiff -v).
func TestVocabularyDevDiff(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_SWEEP") == "" {
		t.Skip("set TOOLFOLD_EVAL_SWEEP=1 to compare the dev half with and without the expansions")
	}
	docs := loadCatalogs(t, catalogsDir(t))
	off, on := defaultTuning, defaultTuning
	off.wordNetWeight, off.feedbackDocs = -1, 0
	if os.Getenv("TOOLFOLD_SWEEP_FEEDBACK") == "" {
		on.wordNetWeight, on.feedbackDocs = 0.3, 0
	}
	if os.Getenv("TOOLFOLD_SWEEP_UNKNOWN") != "" {
		on.wordNetMaxDocs = 5
	}
	base, with := newIndex(docs, nil, off), newIndex(docs, nil, on)
	rank := func(ix *Index, c evalCase) int {
		for i, h := range ix.Search(c.Query, &SearchOptions{Limit: 10}) {
			if slices.Contains(c.Expect, h.ID) {
				return i + 1
			}
		}
		return 99
	}
	for _, c := range loadEval(t, "eval.json") {
		if a, b := rank(base, c), rank(with, c); a != b {
			t.Logf("%2d → %2d  %q  top: %v", a, b, c.Query, ids(with.Search(c.Query, &SearchOptions{Limit: 3})))
		}
	}
}

// TestFeedbackSweep varies the pseudo-relevance feedback on the dev half
// only (TOOLFOLD_EVAL_SWEEP=1 go test -run FeedbackSweep -v).
func TestFeedbackSweep(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_SWEEP") == "" {
		t.Skip("set TOOLFOLD_EVAL_SWEEP=1 to sweep the feedback on the dev half")
	}
	docs := loadCatalogs(t, catalogsDir(t))
	known := knownIDs(docs)
	dev := loadEval(t, "eval.json")
	type variant struct {
		name string
		tune func(*tuning)
	}
	variants := []variant{{"defaults", nil}, {"feedback off", func(t *tuning) { t.feedbackDocs = 0 }}}
	for _, n := range []int{1, 2, 3, 5, 8} {
		variants = append(variants, variant{"docs=" + ftoa(float64(n)), func(t *tuning) { t.feedbackDocs = n }})
	}
	for _, n := range []int{1, 2, 3, 5, 10, 20} {
		variants = append(variants, variant{"terms=" + ftoa(float64(n)), func(t *tuning) { t.feedbackTerms = n }})
	}
	for _, w := range []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.8} {
		variants = append(variants, variant{"weight=" + ftoa(w), func(t *tuning) { t.feedbackWeight = w }})
	}
	for _, v := range slices.Clone(variants[1:]) {
		variants = append(variants, variant{"partial " + v.name, func(t *tuning) {
			t.feedbackOnlyPartial = true
			v.tune(t)
		}})
	}
	for _, v := range variants {
		tune := defaultTuning
		if v.tune != nil {
			v.tune(&tune)
		}
		r := runEval(newIndex(docs, nil, tune), known, dev)
		t.Logf("%-28s recall@1 %.3f  recall@5 %.3f", v.name, r.recall1(), r.recall5())
	}
}

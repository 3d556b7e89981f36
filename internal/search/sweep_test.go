package search

import (
	"fmt"
	"os"
	"testing"
)

// TestTuningSweep varies one ranking constant or field weight at a time
// around the defaults and prints recall on the dev half only; it is how the
// defaults were chosen (TOOLFOLD_EVAL_SWEEP=1 go test -run TuningSweep -v).
func TestTuningSweep(t *testing.T) {
	if os.Getenv("TOOLFOLD_EVAL_SWEEP") == "" {
		t.Skip("set TOOLFOLD_EVAL_SWEEP=1 to sweep the ranking constants on the dev half")
	}
	docs := loadCatalogs(t)
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
		r := runEval(newIndex(docs, &Options{Weights: &weights, SynonymWeight: v.synW}, tune), known, dev, human)
		t.Logf("%-14s recall@1 %.3f  recall@5 %.3f", v.name, r.recall1(), r.recall5())
	}
}

func ftoa(f float64) string { return fmt.Sprintf("%g", f) }

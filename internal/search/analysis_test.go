package search

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"create_issue", "create issue"},
		{"getUserProfile", "get user profile"},
		{"HTTPServer", "http server"},
		{"TwilioApiV2010--CreateMessage", "twilio api v2010 2010 create message"},
		{"API-retrieve-a-page", "api retrieve a page"},
		{"kubectl.get/pods", "kubectl get pods"},
		{"r2_put_object", "r2 put object"},
		{"k8s", "k8s"},
		{"base64-encoded", "base64 base 64 encoded"},
		{"github__list_pull_requests", "github list pull requests"},
		{"Café au lait", "café au lait"},
		{"  --  ", ""},
	}
	for _, tt := range tests {
		var got []string
		splitWords(tt.in, func(w string) { got = append(got, w) })
		if strings.Join(got, " ") != tt.want {
			t.Errorf("splitWords(%q) = %q, want %q", tt.in, strings.Join(got, " "), tt.want)
		}
	}
}

func TestStemFoldsInflections(t *testing.T) {
	// Each row lists words that must share one stem.
	families := [][]string{
		{"issue", "issues"},
		{"list", "lists", "listing", "listed"},
		{"create", "created", "creates", "creating", "creation"},
		{"repository", "repositories"},
		{"update", "updated", "updating", "updates"},
		{"delete", "deleted", "deleting", "deletion"},
		{"file", "files", "filing"},
		{"run", "runs", "running"},
		{"map", "maps", "mapped", "mapping"},
		{"add", "adds", "added", "adding"},
		{"install", "installed", "installing"},
		{"process", "processes", "processing"},
		{"branch", "branches"},
		{"index", "indexes", "indices"},
		{"query", "queries"},
		{"copy", "copied"},
		{"status", "statuses"},
		{"deploy", "deployment", "deployments", "deployed"},
		{"relation", "relations", "relationship"},
		{"recent", "recently"},
		{"use", "used", "using", "uses"},
		{"code", "coding"},
		{"embed", "embedding", "embeddings"},
		{"cache", "caches"},
		{"setting", "settings"},
	}
	for _, family := range families {
		want := stem(family[0])
		for _, w := range family[1:] {
			if got := stem(w); got != want {
				t.Errorf("stem(%q) = %q, but stem(%q) = %q; want them equal", w, got, family[0], want)
			}
		}
	}
}

func TestStemKeepsWordsApart(t *testing.T) {
	// Pairs that must not share a stem.
	apart := [][2]string{
		{"news", "new"},
		{"string", "str"},
		{"ping", "p"},
		{"need", "ne"},
		{"status", "stat"},
		{"document", "docu"},
		{"comment", "com"},
		{"settings", "set"},
		{"analysis", "analys"},
	}
	for _, p := range apart {
		if stem(p[0]) == stem(p[1]) {
			t.Errorf("stem(%q) == stem(%q) == %q; want them apart", p[0], p[1], stem(p[0]))
		}
	}
	for _, w := range []string{"k8s", "v2010", "s3", "bus", "gas", "ids"} {
		if len(w) <= 3 || strings.ContainsAny(w, "0123456789") {
			if got := stem(w); got != w {
				t.Errorf("stem(%q) = %q, want it unchanged (short or with digits)", w, got)
			}
		}
	}
}

func TestAnalyzeDropsStopWords(t *testing.T) {
	got := analyze("Please show me the issues in this repository")
	want := []string{stem("show"), stem("issues"), stem("repository")}
	if !slices.Equal(got, want) {
		t.Errorf("analyze = %q, want %q", got, want)
	}
}

func TestSynonymExpansion(t *testing.T) {
	table := newSynonymTable(DefaultEquivalents, DefaultSynonyms)
	tests := []struct {
		word string
		want []string // each must be among the alternatives
	}{
		{"delete", []string{"remov", "drop"}},
		{"folder", []string{"directory"}},
		{"repo", []string{"repository"}},
		{"pr", []string{"pull request"}},
		{"k8s", []string{"kubernet"}},
		{"db", []string{"databas"}},
		{"find", []string{"search"}},
		{"get rid of", []string{"delet"}},
	}
	for _, tt := range tests {
		var alts []string
		for _, a := range table.alternatives[strings.Join(analyzePhrase(tt.word), " ")] {
			alts = append(alts, strings.Join(a.stems, " "))
		}
		for _, w := range tt.want {
			if !slices.Contains(alts, w) {
				t.Errorf("synonyms of %q = %q, want %q among them", tt.word, alts, w)
			}
		}
	}
}

func TestEquivalentsWeighMoreThanSynonyms(t *testing.T) {
	ix := New(nil, nil)
	tests := []struct {
		query, stem string
		want        float64
	}{
		{"folder", "directory", defaultEquivalentWeight},
		{"repo", "repository", defaultEquivalentWeight},
		{"sms", "text messag", defaultEquivalentWeight},
		{"remove", "delet", defaultSynonymWeight},
	}
	for _, tt := range tests {
		q := ix.parseQuery(tt.query)
		got := 0.0
		for _, term := range q.terms {
			for _, a := range term.alternatives {
				if strings.Join(a.stems, " ") == tt.stem {
					got = a.weight
				}
			}
		}
		if got != tt.want {
			t.Errorf("%q stands for %q at %.2f, want %.2f", tt.query, tt.stem, got, tt.want)
		}
	}
}

func TestTokenHints(t *testing.T) {
	tests := []struct {
		query string
		want  string // first word of the single hint, "" for none
	}{
		{"fetch https://example.com/a", "url"},
		{"list every URL on example.com", "url"},
		{"save this to notes.md", "file"},
		{"show me ~/projects", "directory"},
		{"nested a/b/c", "directory"},
		{"mail jane@example.com", "email"},
		{"send an SMS to +15551234567", ""},
		{"plain words only", ""},
		{"what is at 48.85, 2.29", "coordinates"},
		{"weather at -33.87,151.21 today", "coordinates"},
		{"version 1.2, 3.4 and 5", "coordinates"}, // shape alone decides
		{"release 1.21 notes", ""},
	}
	for _, tt := range tests {
		hints := tokenHints(tt.query)
		got := ""
		if len(hints) > 0 {
			got = hints[0][0]
		}
		if got != tt.want {
			t.Errorf("tokenHints(%q) = %q, want first hint %q", tt.query, hints, tt.want)
		}
	}
}

func TestSplitCompound(t *testing.T) {
	vocab := map[string]bool{"heap": true, "snapshot": true, "local": true, "host": true, "key": true, "vault": true}
	tests := []struct {
		word, left, right string
		ok                bool
	}{
		{"heapsnapshot", "heap", "snapshot", true},
		{"localhost", "local", "host", true},
		{"keyvault", "key", "vault", true},
		{"snapshots", "", "", false},
		{"k8s", "", "", false},
	}
	for _, tt := range tests {
		l, r, ok := splitCompound(tt.word, func(s string) bool { return vocab[s] }, stem)
		if ok != tt.ok || l != tt.left || r != tt.right {
			t.Errorf("splitCompound(%q) = %q, %q, %v; want %q, %q, %v", tt.word, l, r, ok, tt.left, tt.right, tt.ok)
		}
	}
}

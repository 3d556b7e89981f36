// Command grade reads the shim's logs and the answers file and reports,
// per run: the share of user requests whose first real tool call was the
// right tool, the requests and the tokens it took to reach and call it
// (median, p90), and the largest single answer.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// entry is one line of the shim's log (the fields grading reads).
type entry struct {
	Run     string          `json:"run"`
	Agent   string          `json:"agent"`
	Request string          `json:"request"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Tool    string          `json:"tool"`
	Tokens  int             `json:"tokens"`
}

// metaTools are toolfold's own tools: calling them is reaching, not doing.
var metaTools = map[string]bool{"find_tools": true, "describe_tools": true, "guidance": true, "enable_tools": true, "disable_tools": true, "reset_tools": true, "call_tool": true}

// outcome is how one user request went.
type outcome struct {
	right            bool
	called           bool
	requests, tokens int // up to and including the first real call; tokens read before it
}

// report is one run's figures.
type report struct {
	Run                string   `json:"run"`
	Requests           int      `json:"requests"`
	RightFirstCall     float64  `json:"right_first_call"`
	NeverCalled        int      `json:"never_called"`
	RequestsMedian     float64  `json:"requests_to_call_median"`
	TokensMedian       float64  `json:"tokens_to_call_median"`
	TokensP90          float64  `json:"tokens_to_call_p90"`
	LargestAnswer      int      `json:"largest_answer_tokens"`
	LargestAnswerWhere string   `json:"largest_answer_where"`
	Wrong              []string `json:"wrong,omitempty"`
}

func main() {
	answersPath := flag.String("answers", "scripts/eval-agent/answers.json", "the expected tools of each request")
	asJSON := flag.Bool("json", false, "print the reports as JSON")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: grade [-answers answers.json] [-json] LOG.jsonl...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*answersPath, flag.Args(), *asJSON, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "grade:", err)
		os.Exit(1)
	}
}

func run(answersPath string, logs []string, asJSON bool, out io.Writer) error {
	raw, err := os.ReadFile(answersPath)
	if err != nil {
		return fmt.Errorf("reading the answers: %w", err)
	}
	var answers map[string][]string
	if err := json.Unmarshal(raw, &answers); err != nil {
		return fmt.Errorf("decoding %s: %w", answersPath, err)
	}
	var entries []entry
	for _, path := range logs {
		es, err := readLog(path)
		if err != nil {
			return err
		}
		entries = append(entries, es...)
	}
	var runs []string
	byRun := map[string][]entry{}
	for _, e := range entries {
		if _, ok := byRun[e.Run]; !ok {
			runs = append(runs, e.Run)
		}
		byRun[e.Run] = append(byRun[e.Run], e)
	}
	var reports []report
	for _, r := range runs {
		reports = append(reports, grade(r, byRun[r], answers))
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	for _, r := range reports {
		name := r.Run
		if name == "" {
			name = "(no EVAL_RUN label)"
		}
		fmt.Fprintf(out, "run %s: %d user requests\n", name, r.Requests)
		fmt.Fprintf(out, "  right tool on the first real call  %.1f %% (%d never called a tool)\n", 100*r.RightFirstCall, r.NeverCalled)
		fmt.Fprintf(out, "  requests to reach and call         median %.1f\n", r.RequestsMedian)
		fmt.Fprintf(out, "  tokens read to reach and call      median %.0f, p90 %.0f\n", r.TokensMedian, r.TokensP90)
		fmt.Fprintf(out, "  largest single answer              %d tokens (%s)\n", r.LargestAnswer, r.LargestAnswerWhere)
		if len(r.Wrong) > 0 {
			fmt.Fprintf(out, "  wrong or missing: %s\n", strings.Join(r.Wrong, "; "))
		}
	}
	return nil
}

func readLog(path string) ([]entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

func grade(run string, entries []entry, answers map[string][]string) report {
	type key struct{ agent, request string }
	var order []key
	seqs := map[key][]entry{}
	rep := report{Run: run}
	for _, e := range entries {
		k := key{e.Agent, e.Request}
		if _, ok := seqs[k]; !ok {
			order = append(order, k)
		}
		seqs[k] = append(seqs[k], e)
		if e.Tokens > rep.LargestAnswer {
			rep.LargestAnswer, rep.LargestAnswerWhere = e.Tokens, fmt.Sprintf("%s %s %s", e.Request, e.Method, e.Tool)
		}
	}
	var reqs, toks []float64
	right := 0
	for _, k := range order {
		want, known := answers[k.request]
		if !known {
			continue // a request id the answers do not know: not graded
		}
		o := judge(seqs[k], want)
		rep.Requests++
		switch {
		case !o.called:
			rep.NeverCalled++
			rep.Wrong = append(rep.Wrong, k.request+": no tool called")
			continue
		case o.right:
			right++
		default:
			rep.Wrong = append(rep.Wrong, fmt.Sprintf("%s: called %s", k.request, firstReal(seqs[k])))
		}
		reqs = append(reqs, float64(o.requests))
		toks = append(toks, float64(o.tokens))
	}
	if rep.Requests > 0 {
		rep.RightFirstCall = float64(right) / float64(rep.Requests)
	}
	rep.RequestsMedian = percentile(reqs, 0.5)
	rep.TokensMedian = percentile(toks, 0.5)
	rep.TokensP90 = percentile(toks, 0.9)
	return rep
}

// judge finds the first call of a catalog tool in a request's sequence.
func judge(seq []entry, want []string) outcome {
	var o outcome
	for i, e := range seq {
		if e.Method != "tools/call" || metaTools[e.Tool] || e.Tool == "" {
			o.tokens += e.Tokens
			continue
		}
		o.called, o.requests = true, i+1
		o.right = matches(e, want)
		return o
	}
	return o
}

func firstReal(seq []entry) string {
	for _, e := range seq {
		if e.Method == "tools/call" && !metaTools[e.Tool] && e.Tool != "" {
			return e.Tool + action(e)
		}
	}
	return ""
}

// matches reports whether a call reached one of the wanted tools: by name,
// or for a grouped tool by the action it names ("sub.tool" for a tool
// of a group inside).
func matches(e entry, want []string) bool {
	if slices.Contains(want, e.Tool) {
		return true
	}
	a := strings.TrimPrefix(action(e), " action ")
	if a == "" {
		return false
	}
	if i := strings.LastIndexByte(a, '.'); i >= 0 {
		a = a[i+1:]
	}
	for _, w := range want {
		if strings.HasSuffix(w, "__"+a) || w == a {
			return true
		}
	}
	return false
}

func action(e entry) string {
	var p struct {
		Arguments struct {
			Action    string `json:"action"`
			Arguments struct {
				Action string `json:"action"`
			} `json:"arguments"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(e.Params, &p)
	a := p.Arguments.Action
	if a == "" {
		a = p.Arguments.Arguments.Action
	}
	if a == "" {
		return ""
	}
	return " action " + a
}

func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	// Nearest rank: the smallest value with at least q of the values at
	// or below it.
	i := int(float64(len(s))*q+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

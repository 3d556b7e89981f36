package demo

import (
	"context"
	"fmt"
	"strings"
)

type textDiffInput struct {
	Before       string `json:"before" jsonschema:"the original text"`
	After        string `json:"after" jsonschema:"the changed text"`
	ContextLines *int   `json:"context_lines,omitempty" jsonschema:"unchanged lines shown around each change; default 3"`
}

type textDiffOutput struct {
	Identical bool   `json:"identical" jsonschema:"true when the two texts are exactly equal"`
	Added     int    `json:"added" jsonschema:"lines only in after"`
	Removed   int    `json:"removed" jsonschema:"lines only in before"`
	Hunks     int    `json:"hunks" jsonschema:"how many separate regions changed"`
	Unified   string `json:"unified" jsonschema:"the differences in unified diff format (--- before, +++ after, @@ hunks, lines prefixed with space, - or +)"`
	Note      string `json:"note,omitempty" jsonschema:"set when the texts differ in a way lines cannot show, such as the final line break"`
}

// maxDiffCells bounds the work of the line diff (the product of the line
// counts of the differing middle parts): 4 million cells take about 16 MB
// and well under a second.
const maxDiffCells = 4_000_000

func textDiff(_ context.Context, in textDiffInput) (textDiffOutput, error) {
	around := 3
	if in.ContextLines != nil {
		if *in.ContextLines < 0 {
			return textDiffOutput{}, fmt.Errorf("context_lines is %d: pass 0 or more", *in.ContextLines)
		}
		around = *in.ContextLines
	}
	out := textDiffOutput{Identical: in.Before == in.After}
	if out.Identical {
		return out, nil
	}
	a, b := splitLines(in.Before), splitLines(in.After)
	edits, err := diffLines(a, b)
	if err != nil {
		return textDiffOutput{}, err
	}
	for _, e := range edits {
		switch e.op {
		case '+':
			out.Added++
		case '-':
			out.Removed++
		}
	}
	if out.Added == 0 && out.Removed == 0 {
		out.Note = "the texts have the same lines and differ only in the final line break"
		return out, nil
	}
	out.Unified, out.Hunks = unified(edits, a, b, around)
	return out, nil
}

// splitLines cuts text into lines; a final line break ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineEdit is one step of an edit script: keep (' '), remove ('-') or add
// ('+') a line. ai and bi count the lines of a and b before this step.
type lineEdit struct {
	op     byte
	ai, bi int
}

// diffLines returns a shortest edit script from a to b, from a longest
// common subsequence of lines. The common prefix and suffix are taken off
// first, so the quadratic table only covers the part that changed.
func diffLines(a, b []string) ([]lineEdit, error) {
	pre, suf := commonEnds(a, b)
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if (n+1)*(m+1) > maxDiffCells {
		return nil, fmt.Errorf("the changed parts are too large to compare (%d × %d lines, limit %d cells): diff smaller pieces of the texts", n, m, maxDiffCells)
	}
	lcs := lcsTable(ma, mb)
	edits := make([]lineEdit, 0, len(a)+len(b))
	for k := 0; k < pre; k++ {
		edits = append(edits, lineEdit{' ', k, k})
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			edits = append(edits, lineEdit{' ', pre + i, pre + j})
			i++
			j++
		// Removals before additions, as diff -u prints them.
		case i < n && (j == m || lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]):
			edits = append(edits, lineEdit{'-', pre + i, pre + j})
			i++
		default:
			edits = append(edits, lineEdit{'+', pre + i, pre + j})
			j++
		}
	}
	for k := 0; k < suf; k++ {
		edits = append(edits, lineEdit{' ', pre + n + k, pre + m + k})
	}
	return edits, nil
}

// commonEnds counts the lines a and b share at their start and, in what
// is left, at their end.
func commonEnds(a, b []string) (pre, suf int) {
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}

// lcsTable returns the table whose cell i*(len(b)+1)+j is the length of
// the longest common subsequence of a[i:] and b[j:].
func lcsTable(a, b []string) []int32 {
	n, m := len(a), len(b)
	lcs := make([]int32, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
			} else {
				lcs[i*(m+1)+j] = max(lcs[(i+1)*(m+1)+j], lcs[i*(m+1)+j+1])
			}
		}
	}
	return lcs
}

// unified renders an edit script as a unified diff with context lines
// around each change; changes closer than twice the context share a hunk.
func unified(edits []lineEdit, a, b []string, around int) (string, int) {
	var sb strings.Builder
	sb.WriteString("--- before\n+++ after\n")
	hunks := 0
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		// A change starts at i; extend the hunk while the next change is
		// near enough.
		start := max(0, i-around)
		end := i
		for k := i; k < len(edits); k++ {
			if edits[k].op != ' ' {
				end = k
			} else if k-end > 2*around {
				break
			}
		}
		stop := min(len(edits), end+1+around)
		var aCount, bCount int
		for _, e := range edits[start:stop] {
			if e.op != '+' {
				aCount++
			}
			if e.op != '-' {
				bCount++
			}
		}
		aStart, bStart := edits[start].ai, edits[start].bi
		if aCount > 0 {
			aStart++
		}
		if bCount > 0 {
			bStart++
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, e := range edits[start:stop] {
			line := ""
			if e.op == '+' {
				line = b[e.bi]
			} else {
				line = a[e.ai]
			}
			sb.WriteByte(e.op)
			sb.WriteString(line)
			sb.WriteByte('\n')
		}
		hunks++
		i = stop
	}
	return sb.String(), hunks
}

func hunkRange(start, count int) string {
	if count == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

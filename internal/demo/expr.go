package demo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolfold/toolfold/internal/catalog"
)

// The calculator is a small recursive-descent parser that evaluates while
// it parses: no eval, no code generation, nothing but arithmetic on
// float64. Grammar, loosest binding first:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = postfix [ ("^" | "**") unary ]        right-associative
//	postfix = primary { "!" }
//	primary = number | name | name "(" [ expr { "," expr } ] ")" | "(" expr ")"
//
// so -2^2 is -4 and 2^3^2 is 512, as in mathematics.

// Limits that keep a hostile expression from costing much: the length of
// the text, how deeply it may nest (each level is a few stack frames), and
// the largest factorial (171! is already +Inf).
const (
	maxExprLen       = 10_000
	maxExprDepth     = 200
	maxFactorialArg  = 170
	maxFunctionArity = 1000
)

// exprError is an evaluation error with the column it happened at.
type exprError struct {
	col int // 1-based, in characters
	msg string
}

func (e *exprError) Error() string {
	if e.col <= 0 {
		return e.msg
	}
	return fmt.Sprintf("%s (at column %d)", e.msg, e.col)
}

type exprFunc struct {
	minArgs, maxArgs int // maxArgs < 0: any number
	call             func(args []float64) (float64, error)
}

func unary(f func(float64) float64) exprFunc {
	return exprFunc{1, 1, func(a []float64) (float64, error) { return f(a[0]), nil }}
}

var exprFuncs = map[string]exprFunc{
	"abs": unary(math.Abs), "sqrt": unary(math.Sqrt), "cbrt": unary(math.Cbrt), "exp": unary(math.Exp),
	"ln": unary(math.Log), "log2": unary(math.Log2), "log10": unary(math.Log10),
	"sin": unary(math.Sin), "cos": unary(math.Cos), "tan": unary(math.Tan),
	"asin": unary(math.Asin), "acos": unary(math.Acos), "atan": unary(math.Atan),
	"sinh": unary(math.Sinh), "cosh": unary(math.Cosh), "tanh": unary(math.Tanh),
	"floor": unary(math.Floor), "ceil": unary(math.Ceil), "trunc": unary(math.Trunc),
	"sign": unary(func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}),
	"radians": unary(func(x float64) float64 { return x * math.Pi / 180 }),
	"degrees": unary(func(x float64) float64 { return x * 180 / math.Pi }),
	// log(x) is base 10, log(x, b) base b, as on most calculators.
	"log": {1, 2, func(a []float64) (float64, error) {
		if len(a) == 1 {
			return math.Log10(a[0]), nil
		}
		return math.Log(a[0]) / math.Log(a[1]), nil
	}},
	// round(x) to an integer, round(x, n) to n decimals.
	"round": {1, 2, func(a []float64) (float64, error) {
		if len(a) == 1 {
			return math.Round(a[0]), nil
		}
		if a[1] != math.Trunc(a[1]) || math.Abs(a[1]) > 15 {
			return 0, fmt.Errorf("round's second argument is the number of decimals: a whole number from -15 to 15")
		}
		p := math.Pow(10, a[1])
		return math.Round(a[0]*p) / p, nil
	}},
	"pow":   {2, 2, func(a []float64) (float64, error) { return math.Pow(a[0], a[1]), nil }},
	"atan2": {2, 2, func(a []float64) (float64, error) { return math.Atan2(a[0], a[1]), nil }},
	"hypot": {2, 2, func(a []float64) (float64, error) { return math.Hypot(a[0], a[1]), nil }},
	"mod":   {2, 2, func(a []float64) (float64, error) { return modulo(a[0], a[1]) }},
	"min":   {1, -1, func(a []float64) (float64, error) { return slices.Min(a), nil }},
	"max":   {1, -1, func(a []float64) (float64, error) { return slices.Max(a), nil }},
	"sum": {1, -1, func(a []float64) (float64, error) {
		s := 0.0
		for _, x := range a {
			s += x
		}
		return s, nil
	}},
	"avg": {1, -1, func(a []float64) (float64, error) {
		s := 0.0
		for _, x := range a {
			s += x
		}
		return s / float64(len(a)), nil
	}},
}

var exprConstants = map[string]float64{"pi": math.Pi, "e": math.E, "tau": 2 * math.Pi, "phi": math.Phi}

// exprNames lists the functions for error messages.
func exprNames() []string {
	names := make([]string, 0, len(exprFuncs))
	for n := range exprFuncs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// evaluate computes an arithmetic expression. vars may be nil; a variable
// shadows a constant of the same name.
func evaluate(src string, vars map[string]float64) (float64, error) {
	if strings.TrimSpace(src) == "" {
		return 0, &exprError{msg: `expression is empty: pass arithmetic such as "2 * (3 + 4)"`}
	}
	if len(src) > maxExprLen {
		return 0, &exprError{msg: fmt.Sprintf("expression is %d bytes long, more than the limit of %d: split the calculation", len(src), maxExprLen)}
	}
	if !utf8.ValidString(src) {
		return 0, &exprError{msg: "expression is not valid UTF-8 text"}
	}
	p := &exprParser{src: src, vars: vars}
	p.next()
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.tok.kind == tokBad {
		return 0, p.errorf(p.tok, "cannot read %q: %s", p.tok.text, p.tok.hint)
	}
	if p.tok.kind != tokEOF {
		return 0, p.errorf(p.tok, "unexpected %s after a complete expression: is an operator missing?", p.tok.describe())
	}
	if err := checkFinite(v, 0); err != nil {
		return 0, err
	}
	// -0 prints oddly and means nothing to a reader.
	if v == 0 {
		v = 0
	}
	return v, nil
}

func checkFinite(v float64, col int) error {
	switch {
	case math.IsNaN(v):
		return &exprError{col: col, msg: "the result is not a real number (such as the square root or logarithm of a negative number)"}
	case math.IsInf(v, 0):
		return &exprError{col: col, msg: "the result is too large for a 64-bit float (over 1.8e308)"}
	}
	return nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokName
	tokOp // one of + - * / % ^ ! ( ) , and ** (as "^")
	tokBad
)

type token struct {
	kind tokKind
	text string
	num  float64
	off  int    // byte offset in the source; the column is computed only for errors
	hint string // for tokBad: what is wrong with it
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokNum:
		return "number " + t.text
	case tokName:
		return fmt.Sprintf("name %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

type exprParser struct {
	src   string
	pos   int // byte offset of the next unread character
	tok   token
	depth int
	vars  map[string]float64
}

func (p *exprParser) errorf(t token, format string, args ...any) error {
	return &exprError{col: p.col(t.off), msg: fmt.Sprintf(format, args...)}
}

// col converts a byte offset to a 1-based character column. Only errors
// need it, which keeps evaluation linear in the length of the expression.
func (p *exprParser) col(offset int) int { return utf8.RuneCountInString(p.src[:offset]) + 1 }

// next reads the following token into p.tok.
func (p *exprParser) next() {
	for p.pos < len(p.src) {
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		if !unicode.IsSpace(r) {
			break
		}
		p.pos += size
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, off: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		p.tok = p.number(start)
	case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
		for p.pos < len(p.src) && (isNameByte(p.src[p.pos])) {
			p.pos++
		}
		p.tok = token{kind: tokName, text: p.src[start:p.pos], off: start}
	case c == '*' && strings.HasPrefix(p.src[p.pos:], "**"):
		p.pos += 2
		p.tok = token{kind: tokOp, text: "^", off: start}
	case strings.IndexByte("+-*/%^!(),", c) >= 0:
		p.pos++
		p.tok = token{kind: tokOp, text: string(c), off: start}
	default:
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += size
		p.tok = token{kind: tokBad, text: string(r), off: start}
		// Common look-alikes get a precise hint.
		switch r {
		case '×', '·':
			p.tok.hint = "write * to multiply"
		case '÷':
			p.tok.hint = "write / to divide"
		case '−':
			p.tok.hint = "write - to subtract"
		case 'π':
			p.tok.hint = "write pi"
		case '=':
			p.tok.hint = "pass only the expression to evaluate, without = or an equation"
		default:
			p.tok.hint = "use numbers, names, + - * / % ^ ! ( ) and commas"
		}
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// number scans 12, 1.5, .5, 1e-3, 1_000 and 0x1F, 0b101, 0o17.
func (p *exprParser) number(start int) token {
	s := p.src
	if s[p.pos] == '0' && p.pos+1 < len(s) && strings.IndexByte("xXbBoO", s[p.pos+1]) >= 0 {
		return p.radixNumber(start)
	}
	for p.pos < len(s) && (isDigit(s[p.pos]) || s[p.pos] == '.' || s[p.pos] == '_') {
		p.pos++
	}
	p.exponent()
	text := s[start:p.pos]
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || strings.HasPrefix(text, "_") {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return token{kind: tokBad, text: text, hint: "too large for a 64-bit float", off: start}
		}
		return token{kind: tokBad, text: text, hint: "not a valid number", off: start}
	}
	return token{kind: tokNum, text: text, num: v, off: start}
}

// radixNumber scans a hex, binary or octal integer; p.pos is at its 0x,
// 0b or 0o prefix.
func (p *exprParser) radixNumber(start int) token {
	s := p.src
	p.pos += 2
	for p.pos < len(s) && isNameByte(s[p.pos]) {
		p.pos++
	}
	text := s[start:p.pos]
	n, err := strconv.ParseInt(text, 0, 64)
	if err != nil {
		return token{kind: tokBad, text: text, hint: "not a valid hex, binary or octal integer that fits in 64 bits", off: start}
	}
	return token{kind: tokNum, text: text, num: float64(n), off: start}
}

// exponent scans an exponent such as e-3 after a number's digits, but only
// when digits follow, so "2e" reads as 2 times e would be an error rather
// than a surprise.
func (p *exprParser) exponent() {
	s := p.src
	if p.pos >= len(s) || s[p.pos] != 'e' && s[p.pos] != 'E' {
		return
	}
	q := p.pos + 1
	if q < len(s) && (s[q] == '+' || s[q] == '-') {
		q++
	}
	if q >= len(s) || !isDigit(s[q]) {
		return
	}
	p.pos = q
	for p.pos < len(s) && isDigit(s[p.pos]) {
		p.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *exprParser) isOp(ops ...string) bool {
	return p.tok.kind == tokOp && slices.Contains(ops, p.tok.text)
}

func (p *exprParser) enter() error {
	p.depth++
	if p.depth > maxExprDepth {
		return p.errorf(p.tok, "expression nests more than %d levels deep: simplify it", maxExprDepth)
	}
	return nil
}

func (p *exprParser) leave() { p.depth-- }

func (p *exprParser) expr() (float64, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer p.leave()
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for p.isOp("+", "-") {
		op := p.tok
		p.next()
		w, err := p.term()
		if err != nil {
			return 0, err
		}
		if op.text == "+" {
			v += w
		} else {
			v -= w
		}
	}
	return v, nil
}

func (p *exprParser) term() (float64, error) {
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.isOp("*", "/", "%") {
		op := p.tok
		p.next()
		w, err := p.unary()
		if err != nil {
			return 0, err
		}
		switch op.text {
		case "*":
			v *= w
		case "/":
			if w == 0 {
				return 0, p.errorf(op, "division by zero")
			}
			v /= w
		case "%":
			if v, err = modulo(v, w); err != nil {
				return 0, &exprError{col: p.col(op.off), msg: err.Error()}
			}
		}
	}
	return v, nil
}

// modulo is the remainder with the sign of the dividend, as in C and Go.
func modulo(a, b float64) (float64, error) {
	if b == 0 {
		return 0, fmt.Errorf("modulo by zero")
	}
	return math.Mod(a, b), nil
}

func (p *exprParser) unary() (float64, error) {
	if p.isOp("-", "+") {
		if err := p.enter(); err != nil {
			return 0, err
		}
		defer p.leave()
		neg := p.tok.text == "-"
		p.next()
		v, err := p.unary()
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power()
}

func (p *exprParser) power() (float64, error) {
	base, err := p.postfix()
	if err != nil {
		return 0, err
	}
	if !p.isOp("^") {
		return base, nil
	}
	op := p.tok
	p.next()
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer p.leave()
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	if base == 0 && exp < 0 {
		return 0, p.errorf(op, "zero to a negative power is a division by zero")
	}
	return math.Pow(base, exp), nil
}

func (p *exprParser) postfix() (float64, error) {
	v, err := p.primary()
	if err != nil {
		return 0, err
	}
	for p.isOp("!") {
		op := p.tok
		p.next()
		if v < 0 || v != math.Trunc(v) {
			return 0, p.errorf(op, "factorial needs a whole number of 0 or more, not %v", v)
		}
		if v > maxFactorialArg {
			return 0, p.errorf(op, "%v! is too large for a 64-bit float (the largest is %d!)", v, maxFactorialArg)
		}
		f := 1.0
		for k := 2.0; k <= v; k++ {
			f *= k
		}
		v = f
	}
	return v, nil
}

func (p *exprParser) primary() (float64, error) {
	t := p.tok
	switch t.kind {
	case tokNum:
		p.next()
		return t.num, nil
	case tokName:
		p.next()
		if p.isOp("(") {
			return p.call(t)
		}
		if v, ok := p.vars[t.text]; ok {
			return v, nil
		}
		if v, ok := exprConstants[t.text]; ok {
			return v, nil
		}
		if _, ok := exprFuncs[t.text]; ok {
			return 0, p.errorf(t, "%s is a function: call it with parentheses, like %s(2)", t.text, t.text)
		}
		known := []string{}
		for n := range p.vars {
			known = append(known, n)
		}
		for n := range exprConstants {
			known = append(known, n)
		}
		msg := fmt.Sprintf("unknown name %q: use a number, a constant (pi, e, tau, phi) or pass it in variables", t.text)
		if near := catalog.Nearest(t.text, append(known, exprNames()...), 1); len(near) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", near[0])
		}
		return 0, p.errorf(t, "%s", msg)
	case tokOp:
		if t.text == "(" {
			p.next()
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			if !p.isOp(")") {
				return 0, p.errorf(p.tok, "expected ) to close the ( at column %d, found %s", p.col(t.off), p.tok.describe())
			}
			p.next()
			return v, nil
		}
		return 0, p.errorf(t, "expected a number, name or ( but found %s", t.describe())
	case tokBad:
		return 0, p.errorf(t, "cannot read %q: %s", t.text, t.hint)
	}
	return 0, p.errorf(t, "the expression ends too early: a number or name is missing")
}

func (p *exprParser) call(name token) (float64, error) {
	f, ok := exprFuncs[name.text]
	if !ok {
		msg := fmt.Sprintf("unknown function %q", name.text)
		if near := catalog.Nearest(name.text, exprNames(), 1); len(near) > 0 {
			msg += fmt.Sprintf(": did you mean %s?", near[0])
		}
		msg += " Functions: " + strings.Join(exprNames(), ", ")
		return 0, p.errorf(name, "%s", msg)
	}
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer p.leave()
	p.next() // (
	var args []float64
	if !p.isOp(")") {
		for {
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			args = append(args, v)
			if len(args) > maxFunctionArity {
				return 0, p.errorf(name, "%s has more than %d arguments", name.text, maxFunctionArity)
			}
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	if !p.isOp(")") {
		return 0, p.errorf(p.tok, "expected , or ) in the arguments of %s, found %s", name.text, p.tok.describe())
	}
	p.next()
	if len(args) < f.minArgs || (f.maxArgs >= 0 && len(args) > f.maxArgs) {
		want := fmt.Sprint(f.minArgs)
		switch {
		case f.maxArgs < 0:
			want = fmt.Sprintf("at least %d", f.minArgs)
		case f.maxArgs != f.minArgs:
			want = fmt.Sprintf("%d or %d", f.minArgs, f.maxArgs)
		}
		return 0, p.errorf(name, "%s takes %s argument(s), got %d", name.text, want, len(args))
	}
	v, err := f.call(args)
	if err != nil {
		return 0, p.errorf(name, "%s: %v", name.text, err)
	}
	if math.IsNaN(v) {
		return 0, p.errorf(name, "%s(%s) is not a real number: the argument is outside the function's domain", name.text, formatArgs(args))
	}
	return v, nil
}

func formatArgs(args []float64) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = strconv.FormatFloat(a, 'g', -1, 64)
	}
	return strings.Join(s, ", ")
}

package demo

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expr string
		vars map[string]float64
		want float64
	}{
		{"1 + 2 * 3", nil, 7},
		{"(1 + 2) * 3", nil, 9},
		{"10 / 4", nil, 2.5},
		{"10 % 4", nil, 2},
		{"-7 % 3", nil, -1},
		{"2 ^ 10", nil, 1024},
		{"2 ** 3 ** 2", nil, 512}, // right-associative
		{"-2 ^ 2", nil, -4},       // unary minus binds looser than power
		{"2 ^ -1", nil, 0.5},
		{"--3", nil, 3},
		{"+4", nil, 4},
		{"5!", nil, 120},
		{"0!", nil, 1},
		{"3! ^ 2", nil, 36},
		{"1.5e3 + .5", nil, 1500.5},
		{"1_000_000 / 1e6", nil, 1},
		{"0xff + 0b101 + 0o17", nil, 255 + 5 + 15},
		{"sqrt(16) + abs(-3)", nil, 7},
		{"log(1000)", nil, 3},
		{"log(8, 2)", nil, 3},
		{"ln(e)", nil, 1},
		{"round(2.5)", nil, 3},
		{"round(3.14159, 2)", nil, 3.14},
		{"min(3, 1, 2) + max(3, 1, 2)", nil, 4},
		{"sum(1, 2, 3, 4) / avg(2, 4)", nil, 10 / 3.0},
		{"floor(-2.5) + ceil(2.1) + trunc(-2.7)", nil, -3 + 3 - 2},
		{"sin(pi / 2) + cos(0)", nil, 2},
		{"degrees(pi)", nil, 180},
		{"hypot(3, 4)", nil, 5},
		{"pow(2, 0.5) ^ 2", nil, 2.0000000000000004},
		{"mod(7, 3)", nil, 1},
		{"sign(-4) + sign(0) + sign(9)", nil, 0},
		{"x * (1 + rate) ^ years", map[string]float64{"x": 1000, "rate": 0.05, "years": 2}, 1102.5},
		{"e", map[string]float64{"e": 10}, 10}, // a variable shadows a constant
		{"  3  ", nil, 3},
	}
	for _, tt := range tests {
		got, err := evaluate(tt.expr, tt.vars)
		if err != nil {
			t.Errorf("evaluate(%q) failed: %v", tt.expr, err)
			continue
		}
		if math.Abs(got-tt.want) > 1e-12*math.Max(1, math.Abs(tt.want)) {
			t.Errorf("evaluate(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"", "expression is empty"},
		{"1 / 0", "division by zero (at column 3)"},
		{"5 % 0", "modulo by zero"},
		{"0 ^ -1", "division by zero"},
		{"(1 + 2", "expected ) to close the ( at column 1"},
		{"1 + 2)", `unexpected ")" after a complete expression`},
		{"1 +", "the expression ends too early: a number or name is missing (at column 4)"},
		{"1 + * 2", `expected a number, name or ( but found "*"`},
		{"2 3", "unexpected number 3 after a complete expression: is an operator missing? (at column 3)"},
		{"sqrt(-1)", "not a real number"},
		{"ln(0) * 0", "not a real number"},
		{"10 ^ 400", "too large for a 64-bit float"},
		{"1e400", "too large for a 64-bit float"},
		{"sqrtt(4)", `unknown function "sqrtt": did you mean sqrt?`},
		{"sqrt", "sqrt is a function: call it with parentheses"},
		{"pie * 2", `unknown name "pie"`},
		{"pow(2)", "pow takes 2 argument(s), got 1"},
		{"max()", "max takes at least 1 argument(s), got 0"},
		{"2 × 3", "write * to multiply"},
		{"2 = 3", "without = or an equation"},
		{"(-1.5)!", "factorial needs a whole number"},
		{"171!", "too large"},
		{"1..2", "not a valid number"},
		{"round(1, 0.5)", "whole number"},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), "nests more than 200 levels"},
		{strings.Repeat("-", 300) + "1", "nests more than 200 levels"},
		{strings.Repeat("1+", 6000) + "1", "limit of 10000"},
	}
	for _, tt := range tests {
		_, err := evaluate(tt.expr, nil)
		if err == nil {
			t.Errorf("evaluate(%q) succeeded, want an error containing %q", tt.expr, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("evaluate(%q) error = %q, want it to contain %q", tt.expr, err, tt.want)
		}
	}
}

// FuzzEval checks that no input makes the calculator panic, loop, or return
// a value JSON cannot carry, and that it is deterministic. Run it with
// go test -run='^$' -fuzz=FuzzEval -fuzztime=30s ./internal/demo/
func FuzzEval(f *testing.F) {
	for _, seed := range []string{
		"1 + 2 * 3", "-2^2", "2**3**2", "5!", "sqrt(16)", "log(8, 2)", "max(1,2,3)", "0xff", "1e308*10",
		"((((1))))", "1/0", "sin(", "x", "3!!", "round(1.005, 2)", "1_0", ".5e-3", "--+-1", "π", "2e", "0b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := evaluate(expr, map[string]float64{"x": 2})
		if err != nil {
			if _, ok := err.(*exprError); !ok {
				t.Fatalf("evaluate(%q) returned %T, want *exprError", expr, err)
			}
			if err.Error() == "" {
				t.Fatalf("evaluate(%q) returned an empty error", expr)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("evaluate(%q) = %v, which JSON cannot carry", expr, v)
		}
		again, err := evaluate(expr, map[string]float64{"x": 2})
		if err != nil || again != v {
			t.Fatalf("evaluate(%q) is not deterministic: %v then %v, %v", expr, v, again, err)
		}
	})
}

func TestCalculateTool(t *testing.T) {
	c := newClient(t)
	got := callOK[calculateOutput](c, "calculate", map[string]any{"expression": "2 * (3 + 4)^2 / sqrt(16)"})
	if got.Value != 24.5 || got.Text != "24.5" || got.IsInteger {
		t.Errorf("calculate = %+v, want 24.5", got)
	}
	withVars := callOK[calculateOutput](c, "calculate", map[string]any{"expression": "price * qty", "variables": map[string]any{"price": 2.5, "qty": 4}})
	if withVars.Value != 10 || !withVars.IsInteger {
		t.Errorf("calculate with variables = %+v, want 10", withVars)
	}
	c.callErr("calculate", map[string]any{"expression": "1/0"}, `cannot evaluate "1/0"`, "division by zero")
	c.callErr("calculate", map[string]any{"expression": "sqrt", "variables": map[string]any{"sqrt": 1}}, "is also a function")
	c.callErr("calculate", map[string]any{"expression": "1", "variables": map[string]any{"a b": 1}}, "not usable")
}

func TestStatistics(t *testing.T) {
	c := newClient(t)
	got := callOK[statisticsOutput](c, "statistics", map[string]any{
		"numbers": []float64{2, 4, 4, 4, 5, 5, 7, 9}, "percentiles": []float64{90, 0, 100},
	})
	sv, ssd := 32.0/7, math.Sqrt(32.0/7)
	want := statisticsOutput{
		Count: 8, Sum: 40, Mean: 5, Median: 4.5, Modes: []float64{4}, Min: 2, Max: 9, Range: 7,
		Q1: 4, Q3: 5.5, IQR: 1.5, Variance: 4, StdDev: 2, SampleVariance: &sv, SampleStdDev: &ssd,
		Percentiles: []percentile{{90, 7.6}, {0, 2}, {100, 9}},
	}
	if math.Abs(got.Percentiles[0].Value-7.6) < 1e-12 {
		got.Percentiles[0].Value = 7.6
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statistics =\n%+v\nwant\n%+v", got, want)
	}

	one := callOK[statisticsOutput](c, "statistics", map[string]any{"numbers": []float64{3}})
	if one.Mean != 3 || one.StdDev != 0 || one.SampleVariance != nil || len(one.Modes) != 0 {
		t.Errorf("statistics of one number = %+v", one)
	}
	twoModes := callOK[statisticsOutput](c, "statistics", map[string]any{"numbers": []float64{1, 1, 2, 2, 3}})
	if !reflect.DeepEqual(twoModes.Modes, []float64{1, 2}) {
		t.Errorf("modes = %v, want [1 2]", twoModes.Modes)
	}
	c.callErr("statistics", map[string]any{"numbers": []float64{}}, "numbers is empty")
	c.callErr("statistics", map[string]any{"numbers": []float64{1}, "percentiles": []float64{101}}, "0 to 100")
	c.callErr("statistics", map[string]any{"numbers": []float64{1e308, 1e308}}, "too large")
}

func TestConvertUnits(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		value    float64
		from, to string
		want     float64
		category string
	}{
		{5, "mi", "km", 8.04672, "length"},
		{1, "inch", "cm", 2.54, "length"},
		{6, "feet", "m", 1.8288, "length"},
		{212, "F", "C", 100, "temperature"},
		{-40, "celsius", "°F", -40, "temperature"},
		{0, "K", "C", -273.15, "temperature"},
		{1, "kg", "lb", 2.2046226218487757, "mass"},
		{3, "GiB", "MB", 3221.225472, "data"},
		{100, "Mbit", "MB", 12.5, "data"},
		{1, "mb", "kB", 1000, "data"}, // case-insensitive where unambiguous: mb is megabyte
		{1, "gal", "l", 3.785411784, "volume"},
		{1, "ha", "m2", 10000, "area"},
		{90, "min", "h", 1.5, "time"},
		{100, "km/h", "m/s", 27.777777777777775, "speed"},
		{1, "kWh", "kJ", 3600, "energy"},
		{1, "atm", "kPa", 101.325, "pressure"},
		{180, "deg", "rad", math.Pi, "angle"},
	}
	for _, tt := range tests {
		got := callOK[convertUnitsOutput](c, "convert_units", map[string]any{"value": tt.value, "from": tt.from, "to": tt.to})
		if math.Abs(got.Value-tt.want) > 1e-9*math.Max(1, math.Abs(tt.want)) || got.Category != tt.category {
			t.Errorf("convert_units(%v %s → %s) = %+v, want %v (%s)", tt.value, tt.from, tt.to, got, tt.want, tt.category)
		}
	}
	got := callOK[convertUnitsOutput](c, "convert_units", map[string]any{"value": 5, "from": "miles", "to": "kilometers"})
	if got.Text != "5 mi = 8.04672 km" {
		t.Errorf("text = %q", got.Text)
	}
	c.callErr("convert_units", map[string]any{"value": 1, "from": "kg", "to": "km"}, "cannot convert kg (mass) to km (length)", "lb")
	c.callErr("convert_units", map[string]any{"value": 1, "from": "meterz", "to": "km"}, `unknown unit "meterz"`, "did you mean")
}

func TestConvertBase(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		args    map[string]any
		result  string
		decimal string
	}{
		{map[string]any{"value": "255", "to_base": 16}, "ff", "255"},
		{map[string]any{"value": "0xff", "to_base": 2}, "11111111", "255"},
		{map[string]any{"value": "ff", "from_base": 16}, "255", "255"},
		{map[string]any{"value": "-1011", "from_base": 2, "to_base": 10}, "-11", "-11"},
		{map[string]any{"value": "zz", "from_base": 36, "to_base": 8}, "2417", "1295"},
		{map[string]any{"value": "1_000_000", "to_base": 16}, "f4240", "1000000"},
		{map[string]any{"value": "18446744073709551616", "to_base": 16}, "10000000000000000", "18446744073709551616"},
	}
	for _, tt := range tests {
		got := callOK[convertBaseOutput](c, "convert_base", tt.args)
		if got.Result != tt.result || got.Decimal != tt.decimal {
			t.Errorf("convert_base(%v) = %+v, want %s (decimal %s)", tt.args, got, tt.result, tt.decimal)
		}
	}
	c.callErr("convert_base", map[string]any{"value": "12", "from_base": 2}, "not a whole number in base 2")
	c.callErr("convert_base", map[string]any{"value": "12", "to_base": 37}, "2 to 36")
}

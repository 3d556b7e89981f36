package demo

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/catalog"
)

func addMathTools(g *toolfold.Group) {
	tool(g, &mcp.Tool{
		Name: "calculate",
		Description: "Evaluate an arithmetic expression such as \"2 * (3 + 4)^2 / sqrt(16)\" with + - * / % ^ !, parentheses, functions (sqrt, ln, log, sin, round, min, max, …), " +
			"constants pi and e, and optional variables. Returns the value.",
		Annotations: readOnly("Calculate"),
	}, calculate)

	tool(g, &mcp.Tool{
		Name:        "statistics",
		Description: "Summarise a list of numbers: count, sum, mean, median, mode, min, max, range, quartiles, population and sample variance and standard deviation, and any percentiles asked for.",
		Annotations: readOnly("Statistics"),
	}, statistics)

	tool(g, &mcp.Tool{
		Name: "convert_units",
		Description: "Convert a value between units of length, mass, volume, area, time, speed, data size, temperature, energy, pressure or angle (e.g. 5 mi to km, 72 F to C, 3 GiB to MB). " +
			"Returns the converted value.",
		Annotations: readOnly("Convert units"),
	}, convertUnits)

	tool(g, &mcp.Tool{
		Name:        "convert_base",
		Description: "Convert a whole number of any size between bases 2 to 36 (binary, octal, decimal, hex, …). Returns it in the target base and in decimal.",
		Annotations: readOnly("Convert number base"),
	}, convertBase)
}

// ---- calculate

type calculateInput struct {
	Expression string             `json:"expression" jsonschema:"the arithmetic to evaluate, e.g. (1 + 2) * 3 ^ 2 or round(100 * 17 / 23, 2); ^ (or **) is power, % remainder, ! factorial; log is base 10, ln natural; trigonometry in radians"`
	Variables  map[string]float64 `json:"variables,omitempty" jsonschema:"values for names used in the expression, e.g. {\"x\": 2, \"rate\": 0.05}"`
}

type calculateOutput struct {
	Expression string  `json:"expression" jsonschema:"the expression as given"`
	Value      float64 `json:"value" jsonschema:"the result as a 64-bit float"`
	Text       string  `json:"text" jsonschema:"the result as the shortest decimal that reads back exactly"`
	IsInteger  bool    `json:"is_integer" jsonschema:"true when the result is a whole number"`
}

var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func calculate(_ context.Context, in calculateInput) (calculateOutput, error) {
	for name := range in.Variables {
		if !variableName.MatchString(name) {
			return calculateOutput{}, fmt.Errorf("variable name %q is not usable in an expression: use letters, digits and _, starting with a letter", name)
		}
		if _, isFunc := exprFuncs[name]; isFunc {
			return calculateOutput{}, fmt.Errorf("variable name %q is also a function: rename the variable", name)
		}
	}
	v, err := evaluate(in.Expression, in.Variables)
	if err != nil {
		return calculateOutput{}, fmt.Errorf("cannot evaluate %q: %w", in.Expression, err)
	}
	return calculateOutput{Expression: in.Expression, Value: v, Text: strconv.FormatFloat(v, 'g', -1, 64),
		IsInteger: v == math.Trunc(v)}, nil
}

// ---- statistics

type statisticsInput struct {
	Numbers     []float64 `json:"numbers" jsonschema:"the data, at least one number"`
	Percentiles []float64 `json:"percentiles,omitempty" jsonschema:"percentiles to compute, each from 0 to 100, e.g. [90, 99]"`
}

type percentile struct {
	Percentile float64 `json:"percentile" jsonschema:"the percentile asked for"`
	Value      float64 `json:"value" jsonschema:"its value, interpolated linearly between the nearest data points"`
}

type statisticsOutput struct {
	Count          int          `json:"count" jsonschema:"how many numbers"`
	Sum            float64      `json:"sum" jsonschema:"their sum"`
	Mean           float64      `json:"mean" jsonschema:"the arithmetic mean"`
	Median         float64      `json:"median" jsonschema:"the middle value (mean of the two middle values for an even count)"`
	Modes          []float64    `json:"modes" jsonschema:"the most frequent values; empty when every value occurs once"`
	Min            float64      `json:"min" jsonschema:"the smallest number"`
	Max            float64      `json:"max" jsonschema:"the largest number"`
	Range          float64      `json:"range" jsonschema:"max minus min"`
	Q1             float64      `json:"q1" jsonschema:"the first quartile (25th percentile)"`
	Q3             float64      `json:"q3" jsonschema:"the third quartile (75th percentile)"`
	IQR            float64      `json:"iqr" jsonschema:"the interquartile range, q3 minus q1"`
	Variance       float64      `json:"variance" jsonschema:"the population variance (divided by n)"`
	StdDev         float64      `json:"std_dev" jsonschema:"the population standard deviation"`
	SampleVariance *float64     `json:"sample_variance,omitempty" jsonschema:"the sample variance (divided by n-1); absent for a single number"`
	SampleStdDev   *float64     `json:"sample_std_dev,omitempty" jsonschema:"the sample standard deviation; absent for a single number"`
	Percentiles    []percentile `json:"percentiles,omitempty" jsonschema:"the percentiles asked for, in the order asked"`
}

func statistics(_ context.Context, in statisticsInput) (statisticsOutput, error) {
	n := len(in.Numbers)
	if n == 0 {
		return statisticsOutput{}, fmt.Errorf("numbers is empty: pass at least one number, e.g. [3, 1, 4, 1, 5]")
	}
	sorted := slices.Clone(in.Numbers)
	slices.Sort(sorted)
	out := statisticsOutput{Count: n, Min: sorted[0], Max: sorted[n-1], Modes: []float64{}}
	// Welford's method: one pass, and no catastrophic cancellation when
	// the values are large and close together.
	var mean, m2 float64
	for i, x := range in.Numbers {
		out.Sum += x
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	out.Mean = mean
	out.Variance = m2 / float64(n)
	out.StdDev = math.Sqrt(out.Variance)
	if n > 1 {
		sv := m2 / float64(n-1)
		out.SampleVariance, out.SampleStdDev = &sv, ptr(math.Sqrt(sv))
	}
	out.Range = out.Max - out.Min
	out.Median = quantile(sorted, 0.5)
	out.Q1, out.Q3 = quantile(sorted, 0.25), quantile(sorted, 0.75)
	out.IQR = out.Q3 - out.Q1

	best, run := 1, 1
	for i := 1; i <= n; i++ {
		if i < n && sorted[i] == sorted[i-1] {
			run++
			continue
		}
		switch {
		case run > best:
			best, out.Modes = run, []float64{sorted[i-1]}
		case run == best && best > 1:
			out.Modes = append(out.Modes, sorted[i-1])
		}
		run = 1
	}
	for _, p := range in.Percentiles {
		if p < 0 || p > 100 {
			return statisticsOutput{}, fmt.Errorf("percentile %v is out of range: pass values from 0 to 100", p)
		}
		out.Percentiles = append(out.Percentiles, percentile{p, quantile(sorted, p/100)})
	}
	for _, v := range []float64{out.Sum, out.Mean, out.Variance, out.Range} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return statisticsOutput{}, fmt.Errorf("the numbers are too large to sum in 64-bit floats: scale them down (e.g. divide by 1e100) first")
		}
	}
	if out.SampleVariance != nil && math.IsInf(*out.SampleVariance, 0) {
		return statisticsOutput{}, fmt.Errorf("the numbers are too spread out for a 64-bit variance: scale them down first")
	}
	return out, nil
}

// quantile interpolates linearly between the closest ranks of sorted data
// (the method of numpy's default and of Excel's PERCENTILE.INC).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	frac := pos - float64(lo)
	if frac == 0 {
		return sorted[lo]
	}
	return sorted[lo] + frac*(sorted[hi]-sorted[lo])
}

// ---- convert_units

// unit converts to its category's base unit as base = value*factor + offset.
type unit struct {
	symbol   string
	name     string
	category string
	factor   float64
	offset   float64
	aliases  []string
}

var units = []unit{
	// length, base metre
	{"m", "metre", "length", 1, 0, []string{"meter", "meters", "metre", "metres"}},
	{"km", "kilometre", "length", 1e3, 0, []string{"kilometer", "kilometers", "kilometre", "kilometres"}},
	{"cm", "centimetre", "length", 1e-2, 0, []string{"centimeter", "centimeters", "centimetre", "centimetres"}},
	{"mm", "millimetre", "length", 1e-3, 0, []string{"millimeter", "millimeters", "millimetre", "millimetres"}},
	{"um", "micrometre", "length", 1e-6, 0, []string{"µm", "micrometer", "micrometers", "micron", "microns"}},
	{"nm", "nanometre", "length", 1e-9, 0, []string{"nanometer", "nanometers"}},
	{"mi", "mile", "length", 1609.344, 0, []string{"mile", "miles"}},
	{"yd", "yard", "length", 0.9144, 0, []string{"yard", "yards"}},
	{"ft", "foot", "length", 0.3048, 0, []string{"foot", "feet", "'"}},
	{"in", "inch", "length", 0.0254, 0, []string{"inch", "inches", "\""}},
	{"nmi", "nautical mile", "length", 1852, 0, []string{"nautical_mile", "nautical_miles"}},
	// mass, base kilogram
	{"kg", "kilogram", "mass", 1, 0, []string{"kilogram", "kilograms", "kilo", "kilos"}},
	{"g", "gram", "mass", 1e-3, 0, []string{"gram", "grams"}},
	{"mg", "milligram", "mass", 1e-6, 0, []string{"milligram", "milligrams"}},
	{"ug", "microgram", "mass", 1e-9, 0, []string{"µg", "microgram", "micrograms"}},
	{"t", "tonne", "mass", 1e3, 0, []string{"tonne", "tonnes", "metric_ton"}},
	{"lb", "pound", "mass", 0.45359237, 0, []string{"lbs", "pound", "pounds"}},
	{"oz", "ounce", "mass", 0.028349523125, 0, []string{"ounce", "ounces"}},
	{"st", "stone", "mass", 6.35029318, 0, []string{"stone", "stones"}},
	// volume, base cubic metre
	{"m3", "cubic metre", "volume", 1, 0, []string{"m³", "cubic_meter", "cubic_meters"}},
	{"l", "litre", "volume", 1e-3, 0, []string{"L", "liter", "liters", "litre", "litres"}},
	{"dl", "decilitre", "volume", 1e-4, 0, []string{"dL", "deciliter", "decilitre"}},
	{"cl", "centilitre", "volume", 1e-5, 0, []string{"cL", "centiliter", "centilitre"}},
	{"ml", "millilitre", "volume", 1e-6, 0, []string{"mL", "milliliter", "milliliters", "millilitre", "millilitres", "cm3", "cc"}},
	{"gal", "US gallon", "volume", 3.785411784e-3, 0, []string{"gallon", "gallons", "us_gal"}},
	{"imp_gal", "imperial gallon", "volume", 4.54609e-3, 0, []string{"imperial_gallon", "uk_gal"}},
	{"qt", "US quart", "volume", 9.46352946e-4, 0, []string{"quart", "quarts"}},
	{"pt", "US pint", "volume", 4.73176473e-4, 0, []string{"pint", "pints"}},
	{"cup", "US cup", "volume", 2.365882365e-4, 0, []string{"cups"}},
	{"floz", "US fluid ounce", "volume", 2.95735295625e-5, 0, []string{"fl_oz", "fluid_ounce", "fluid_ounces"}},
	{"tbsp", "tablespoon", "volume", 1.478676478125e-5, 0, []string{"tablespoon", "tablespoons"}},
	{"tsp", "teaspoon", "volume", 4.92892159375e-6, 0, []string{"teaspoon", "teaspoons"}},
	{"ft3", "cubic foot", "volume", 0.028316846592, 0, []string{"ft³", "cubic_foot", "cubic_feet"}},
	// area, base square metre
	{"m2", "square metre", "area", 1, 0, []string{"m²", "sq_m", "square_meter", "square_meters"}},
	{"km2", "square kilometre", "area", 1e6, 0, []string{"km²", "sq_km", "square_kilometer", "square_kilometers"}},
	{"cm2", "square centimetre", "area", 1e-4, 0, []string{"cm²", "sq_cm"}},
	{"ha", "hectare", "area", 1e4, 0, []string{"hectare", "hectares"}},
	{"acre", "acre", "area", 4046.8564224, 0, []string{"acres", "ac"}},
	{"ft2", "square foot", "area", 0.09290304, 0, []string{"ft²", "sq_ft", "square_foot", "square_feet"}},
	{"in2", "square inch", "area", 6.4516e-4, 0, []string{"in²", "sq_in"}},
	{"mi2", "square mile", "area", 2589988.110336, 0, []string{"mi²", "sq_mi", "square_mile", "square_miles"}},
	// time, base second; month and year are the Gregorian averages.
	{"ns", "nanosecond", "time", 1e-9, 0, []string{"nanosecond", "nanoseconds"}},
	{"us", "microsecond", "time", 1e-6, 0, []string{"µs", "microsecond", "microseconds"}},
	{"ms", "millisecond", "time", 1e-3, 0, []string{"millisecond", "milliseconds"}},
	{"s", "second", "time", 1, 0, []string{"sec", "secs", "second", "seconds"}},
	{"min", "minute", "time", 60, 0, []string{"mins", "minute", "minutes"}},
	{"h", "hour", "time", 3600, 0, []string{"hr", "hrs", "hour", "hours"}},
	{"d", "day", "time", 86400, 0, []string{"day", "days"}},
	{"wk", "week", "time", 7 * 86400, 0, []string{"week", "weeks"}},
	{"mo", "month (average Gregorian, 30.436875 days)", "time", 30.436875 * 86400, 0, []string{"month", "months"}},
	{"yr", "year (average Gregorian, 365.2425 days)", "time", 365.2425 * 86400, 0, []string{"y", "year", "years"}},
	// speed, base metre per second
	{"m/s", "metre per second", "speed", 1, 0, []string{"mps", "meters_per_second"}},
	{"km/h", "kilometre per hour", "speed", 1 / 3.6, 0, []string{"kmh", "kph", "kilometers_per_hour"}},
	{"mph", "mile per hour", "speed", 0.44704, 0, []string{"mi/h", "miles_per_hour"}},
	{"kn", "knot", "speed", 1852.0 / 3600, 0, []string{"knot", "knots", "kt"}},
	{"ft/s", "foot per second", "speed", 0.3048, 0, []string{"fps"}},
	// data, base byte; k/M/G are powers of 1000, Ki/Mi/Gi of 1024.
	{"bit", "bit", "data", 1.0 / 8, 0, []string{"bits"}},
	{"B", "byte", "data", 1, 0, []string{"byte", "bytes"}},
	{"kB", "kilobyte", "data", 1e3, 0, []string{"KB", "kilobyte", "kilobytes"}},
	{"MB", "megabyte", "data", 1e6, 0, []string{"megabyte", "megabytes"}},
	{"GB", "gigabyte", "data", 1e9, 0, []string{"gigabyte", "gigabytes"}},
	{"TB", "terabyte", "data", 1e12, 0, []string{"terabyte", "terabytes"}},
	{"PB", "petabyte", "data", 1e15, 0, []string{"petabyte", "petabytes"}},
	{"KiB", "kibibyte", "data", 1024, 0, []string{"kibibyte", "kibibytes"}},
	{"MiB", "mebibyte", "data", 1 << 20, 0, []string{"mebibyte", "mebibytes"}},
	{"GiB", "gibibyte", "data", 1 << 30, 0, []string{"gibibyte", "gibibytes"}},
	{"TiB", "tebibyte", "data", 1 << 40, 0, []string{"tebibyte", "tebibytes"}},
	{"PiB", "pebibyte", "data", 1 << 50, 0, []string{"pebibyte", "pebibytes"}},
	{"kbit", "kilobit", "data", 1e3 / 8, 0, []string{"kbps", "kilobit", "kilobits"}},
	{"Mbit", "megabit", "data", 1e6 / 8, 0, []string{"Mb", "Mbps", "megabit", "megabits"}},
	{"Gbit", "gigabit", "data", 1e9 / 8, 0, []string{"Gb", "Gbps", "gigabit", "gigabits"}},
	// temperature, base kelvin
	{"K", "kelvin", "temperature", 1, 0, []string{"kelvin", "kelvins"}},
	{"C", "degree Celsius", "temperature", 1, 273.15, []string{"°C", "degC", "celsius", "centigrade"}},
	{"F", "degree Fahrenheit", "temperature", 5.0 / 9, 459.67 * 5 / 9, []string{"°F", "degF", "fahrenheit"}},
	// energy, base joule
	{"J", "joule", "energy", 1, 0, []string{"joule", "joules"}},
	{"kJ", "kilojoule", "energy", 1e3, 0, []string{"kilojoule", "kilojoules"}},
	{"cal", "calorie", "energy", 4.184, 0, []string{"calorie", "calories"}},
	{"kcal", "kilocalorie", "energy", 4184, 0, []string{"Cal", "kilocalorie", "kilocalories"}},
	{"Wh", "watt-hour", "energy", 3600, 0, []string{"watt_hour", "watt_hours"}},
	{"kWh", "kilowatt-hour", "energy", 3.6e6, 0, []string{"kilowatt_hour", "kilowatt_hours"}},
	{"BTU", "British thermal unit", "energy", 1055.05585262, 0, []string{"btu"}},
	{"eV", "electronvolt", "energy", 1.602176634e-19, 0, []string{"electronvolt", "electronvolts"}},
	// pressure, base pascal
	{"Pa", "pascal", "pressure", 1, 0, []string{"pascal", "pascals"}},
	{"kPa", "kilopascal", "pressure", 1e3, 0, []string{"kilopascal", "kilopascals"}},
	{"bar", "bar", "pressure", 1e5, 0, []string{"bars"}},
	{"atm", "standard atmosphere", "pressure", 101325, 0, []string{"atmosphere", "atmospheres"}},
	{"psi", "pound per square inch", "pressure", 6894.757293168361, 0, nil},
	{"mmHg", "millimetre of mercury", "pressure", 133.322387415, 0, []string{"torr"}},
	// angle, base radian
	{"rad", "radian", "angle", 1, 0, []string{"radian", "radians"}},
	{"deg", "degree", "angle", math.Pi / 180, 0, []string{"°", "degree", "degrees"}},
	{"grad", "gradian", "angle", math.Pi / 200, 0, []string{"gon", "gradian", "gradians"}},
	{"turn", "turn", "angle", 2 * math.Pi, 0, []string{"turns", "rev", "revolution", "revolutions"}},
}

// caseSensitiveUnits are names whose case carries their meaning: they are
// found only as written, so "mb" means megabyte while "Mb" means megabit.
var caseSensitiveUnits = map[string]bool{"Mb": true, "Gb": true, "Mbps": true, "Gbps": true, "Cal": true}

// unitIndex finds units by exact symbol or alias, then case-insensitively
// where that is unambiguous.
var unitIndex = func() struct{ exact, folded map[string]*unit } {
	idx := struct{ exact, folded map[string]*unit }{map[string]*unit{}, map[string]*unit{}}
	ambiguous := map[string]bool{}
	for i := range units {
		u := &units[i]
		for _, name := range append([]string{u.symbol}, u.aliases...) {
			if _, dup := idx.exact[name]; dup {
				panic("demo: unit name " + name + " is defined twice")
			}
			idx.exact[name] = u
			if caseSensitiveUnits[name] {
				continue
			}
			f := strings.ToLower(name)
			if prev, ok := idx.folded[f]; ok && prev != u {
				ambiguous[f] = true
			}
			idx.folded[f] = u
		}
	}
	for f := range ambiguous {
		delete(idx.folded, f)
	}
	return idx
}()

func lookupUnit(name string) (*unit, error) {
	n := strings.TrimSpace(name)
	n = strings.ReplaceAll(n, " ", "_")
	if u, ok := unitIndex.exact[n]; ok {
		return u, nil
	}
	if u, ok := unitIndex.folded[strings.ToLower(n)]; ok {
		return u, nil
	}
	if n == "" {
		return nil, fmt.Errorf("a unit is empty: pass a symbol such as km, lb, F or GiB")
	}
	all := make([]string, 0, len(unitIndex.exact))
	for k := range unitIndex.exact {
		all = append(all, k)
	}
	msg := fmt.Sprintf("unknown unit %q", name)
	if near := catalog.Nearest(n, all, 3); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("%s: known units are %s", msg, unitSymbols(""))
}

// unitSymbols lists the symbols of a category, or of all by category.
func unitSymbols(category string) string {
	var parts []string
	var cur string
	var syms []string
	flush := func() {
		if cur != "" {
			parts = append(parts, cur+": "+strings.Join(syms, " "))
		}
	}
	for _, u := range units {
		if category != "" && u.category != category {
			continue
		}
		if u.category != cur {
			flush()
			cur, syms = u.category, nil
		}
		syms = append(syms, u.symbol)
	}
	flush()
	return strings.Join(parts, "; ")
}

type convertUnitsInput struct {
	Value float64 `json:"value" jsonschema:"the quantity to convert"`
	From  string  `json:"from" jsonschema:"the unit of value: a symbol or name such as km, mi, lb, kg, F, C, K, GiB, MB, h, mph, kWh, psi, deg"`
	To    string  `json:"to" jsonschema:"the unit to convert to, of the same kind as from"`
}

type convertUnitsOutput struct {
	Value    float64 `json:"value" jsonschema:"the converted value"`
	Text     string  `json:"text" jsonschema:"the conversion as a sentence, rounded to 10 significant digits, e.g. 5 mi = 8.04672 km"`
	From     string  `json:"from" jsonschema:"the canonical symbol of the source unit"`
	To       string  `json:"to" jsonschema:"the canonical symbol of the target unit"`
	Category string  `json:"category" jsonschema:"the kind of quantity: length, mass, volume, area, time, speed, data, temperature, energy, pressure or angle"`
}

func convertUnits(_ context.Context, in convertUnitsInput) (convertUnitsOutput, error) {
	from, err := lookupUnit(in.From)
	if err != nil {
		return convertUnitsOutput{}, fmt.Errorf("from: %w", err)
	}
	to, err := lookupUnit(in.To)
	if err != nil {
		return convertUnitsOutput{}, fmt.Errorf("to: %w", err)
	}
	if from.category != to.category {
		return convertUnitsOutput{}, fmt.Errorf("cannot convert %s (%s) to %s (%s): pick a target unit of %s, one of %s",
			from.symbol, from.category, to.symbol, to.category, from.category, unitSymbols(from.category))
	}
	v := ((in.Value*from.factor + from.offset) - to.offset) / to.factor
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return convertUnitsOutput{}, fmt.Errorf("%v %s in %s is too large for a 64-bit float", in.Value, from.symbol, to.symbol)
	}
	if v == 0 {
		v = 0 // no -0
	}
	text := fmt.Sprintf("%s %s = %s %s", strconv.FormatFloat(in.Value, 'g', -1, 64), from.symbol,
		strconv.FormatFloat(v, 'g', 10, 64), to.symbol)
	return convertUnitsOutput{Value: v, Text: text, From: from.symbol, To: to.symbol, Category: from.category}, nil
}

// ---- convert_base

type convertBaseInput struct {
	Value    string `json:"value" jsonschema:"the whole number to convert, e.g. ff, 0xff, -1011, 1_000_000; a 0x, 0b or 0o prefix sets the base when from_base is 0"`
	FromBase int    `json:"from_base,omitempty" jsonschema:"the base value is written in, 2 to 36; 0 or absent means 10 unless value has a 0x, 0b or 0o prefix"`
	ToBase   int    `json:"to_base,omitempty" jsonschema:"the base to write the result in, 2 to 36; default 10"`
}

type convertBaseOutput struct {
	Result  string `json:"result" jsonschema:"the number in to_base, lower-case digits"`
	Decimal string `json:"decimal" jsonschema:"the number in base 10"`
	Bits    int    `json:"bits" jsonschema:"how many bits the number's magnitude needs"`
}

func convertBase(_ context.Context, in convertBaseInput) (convertBaseOutput, error) {
	to := in.ToBase
	if to == 0 {
		to = 10
	}
	if to < 2 || to > 36 {
		return convertBaseOutput{}, fmt.Errorf("to_base is %d: pass a base from 2 to 36", in.ToBase)
	}
	if in.FromBase != 0 && (in.FromBase < 2 || in.FromBase > 36) {
		return convertBaseOutput{}, fmt.Errorf("from_base is %d: pass a base from 2 to 36, or 0 to read a 0x/0b/0o prefix", in.FromBase)
	}
	s := strings.TrimSpace(in.Value)
	if s == "" {
		return convertBaseOutput{}, errEmpty("value", `a whole number such as "255" or "0xff"`)
	}
	if len(s) > 10_000 {
		return convertBaseOutput{}, fmt.Errorf("value has %d characters, more than the limit of 10000", len(s))
	}
	n := new(big.Int)
	ok := false
	if in.FromBase == 0 {
		_, ok = n.SetString(s, 0)
	} else {
		// SetString with an explicit base takes no prefix and no
		// underscores; drop underscores, which people use to group digits.
		_, ok = n.SetString(strings.ReplaceAll(s, "_", ""), in.FromBase)
	}
	if !ok {
		base := "10 (or the base of its 0x/0b/0o prefix)"
		if in.FromBase != 0 {
			base = strconv.Itoa(in.FromBase)
		}
		return convertBaseOutput{}, fmt.Errorf("value %q is not a whole number in base %s: check the digits, or set from_base", in.Value, base)
	}
	return convertBaseOutput{Result: n.Text(to), Decimal: n.Text(10), Bits: n.BitLen()}, nil
}

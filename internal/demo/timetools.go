package demo

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

func addTimeTools(g *toolfold.Group, now func() time.Time) {
	tool(g, &mcp.Tool{
		Name:        "current_time",
		Description: "Tell the current date and time in a time zone (default UTC). Returns it as RFC 3339 with the zone's offset, abbreviation, weekday, ISO week and Unix time.",
		Annotations: readOnly("Current time"),
	}, func(_ context.Context, in currentTimeInput) (timeInfo, error) {
		loc, err := loadZone(in.TimeZone, "time_zone")
		if err != nil {
			return timeInfo{}, err
		}
		return describeTime(now().In(loc)), nil
	})

	tool(g, &mcp.Tool{
		Name:        "convert_time_zone",
		Description: "Convert a date and time to another time zone, e.g. 2024-05-01 09:00 in America/New_York to Asia/Tokyo. Returns the same instant as seen in the target zone.",
		Annotations: readOnly("Convert time zone"),
	}, func(_ context.Context, in convertZoneInput) (timeInfo, error) {
		if strings.TrimSpace(in.ToZone) == "" {
			return timeInfo{}, errEmpty("to_zone", "an IANA time zone such as \"Asia/Tokyo\"")
		}
		from, err := loadZone(in.FromZone, "from_zone")
		if err != nil {
			return timeInfo{}, err
		}
		to, err := loadZone(in.ToZone, "to_zone")
		if err != nil {
			return timeInfo{}, err
		}
		t, err := parseTime("time", in.Time, from, now)
		if err != nil {
			return timeInfo{}, err
		}
		return describeTime(t.In(to)), nil
	})

	tool(g, &mcp.Tool{
		Name:        "parse_time",
		Description: "Read a date or time written in a common format (RFC 3339, RFC 1123, \"2024-05-01 14:30\", \"May 1, 2024\", a Unix timestamp, \"now\"). Returns it in RFC 3339 with weekday, day of year, ISO week and Unix time.",
		Annotations: readOnly("Parse time"),
	}, func(_ context.Context, in parseTimeInput) (timeInfo, error) {
		loc, err := loadZone(in.TimeZone, "time_zone")
		if err != nil {
			return timeInfo{}, err
		}
		t, err := parseTime("text", in.Text, loc, now)
		if err != nil {
			return timeInfo{}, err
		}
		return describeTime(t), nil
	})

	tool(g, &mcp.Tool{
		Name: "format_time",
		Description: "Write a date and time in a chosen layout: a named one (rfc3339, rfc1123, kitchen, date, datetime, unix, …), a strftime pattern (%Y-%m-%d %H:%M) or a Go layout (2006-01-02). " +
			"Returns the formatted text.",
		Annotations: readOnly("Format time"),
	}, func(_ context.Context, in formatTimeInput) (formatTimeOutput, error) {
		loc, err := loadZone(in.TimeZone, "time_zone")
		if err != nil {
			return formatTimeOutput{}, err
		}
		t, err := parseTime("time", in.Time, loc, now)
		if err != nil {
			return formatTimeOutput{}, err
		}
		if in.TimeZone != "" {
			t = t.In(loc)
		}
		s, err := formatTime(t, in.Layout)
		if err != nil {
			return formatTimeOutput{}, err
		}
		return formatTimeOutput{Formatted: s}, nil
	})

	tool(g, &mcp.Tool{
		Name: "add_duration",
		Description: "Add a duration to a date and time (subtract with a leading -): \"1h30m\", \"3 days\", \"2w\", \"1y6mo\" or ISO 8601 \"P1DT12H\". " +
			"Years, months, weeks and days follow the calendar (keeping the wall-clock time across DST). Returns the resulting time.",
		Annotations: readOnly("Add duration"),
	}, func(_ context.Context, in addDurationInput) (timeInfo, error) {
		loc, err := loadZone(in.TimeZone, "time_zone")
		if err != nil {
			return timeInfo{}, err
		}
		t, err := parseTime("time", in.Time, loc, now)
		if err != nil {
			return timeInfo{}, err
		}
		d, err := parseCalendarDuration(in.Duration)
		if err != nil {
			return timeInfo{}, err
		}
		return describeTime(d.addTo(t)), nil
	})

	tool(g, &mcp.Tool{
		Name:        "time_between",
		Description: "Measure the time from start to end (default now): exact seconds and days, the calendar difference in years, months, days, hours, minutes and seconds, and the number of weekdays.",
		Annotations: readOnly("Time between"),
	}, func(_ context.Context, in timeBetweenInput) (timeBetweenOutput, error) {
		loc, err := loadZone(in.TimeZone, "time_zone")
		if err != nil {
			return timeBetweenOutput{}, err
		}
		start, err := parseTime("start", in.Start, loc, now)
		if err != nil {
			return timeBetweenOutput{}, err
		}
		end := now().In(loc)
		if in.End != "" {
			if end, err = parseTime("end", in.End, loc, now); err != nil {
				return timeBetweenOutput{}, err
			}
		}
		return timeBetween(start, end), nil
	})
}

type currentTimeInput struct {
	TimeZone string `json:"time_zone,omitempty" jsonschema:"an IANA time zone such as Europe/Paris or America/New_York, UTC (default), Local (the server's zone) or an offset such as +05:30"`
}

type convertZoneInput struct {
	Time     string `json:"time" jsonschema:"the date and time to convert, e.g. 2024-05-01T09:00:00 or 2024-05-01 09:00 or now; read in from_zone when it has no offset"`
	FromZone string `json:"from_zone,omitempty" jsonschema:"the time zone time is written in, when it has no offset; default UTC"`
	ToZone   string `json:"to_zone" jsonschema:"the time zone to convert to, e.g. Asia/Tokyo"`
}

type parseTimeInput struct {
	Text     string `json:"text" jsonschema:"the date or time to read, e.g. 2024-05-01T14:30:00+02:00, 2024-05-01, 20240501, May 1 2024 2:30PM, Wed, 01 May 2024 14:30:00 GMT, a Unix timestamp (1714566600 in seconds; 13 digits or more are milliseconds) or now"`
	TimeZone string `json:"time_zone,omitempty" jsonschema:"the time zone for text without an offset; default UTC"`
}

type formatTimeInput struct {
	Time     string `json:"time" jsonschema:"the date and time to format, in any format parse_time reads, or now"`
	Layout   string `json:"layout" jsonschema:"a name (rfc3339, rfc3339nano, rfc1123, rfc1123z, rfc822, rfc850, ansic, unix_date, kitchen, date, time, datetime, iso_week, unix, unix_ms), a strftime pattern with % codes (%Y-%m-%d %H:%M:%S, %A %d %B %Y) or a Go layout (Mon Jan 2 15:04:05 2006)"`
	TimeZone string `json:"time_zone,omitempty" jsonschema:"convert to this time zone before formatting (also used to read a time without an offset); default: keep the time's own offset, or UTC"`
}

type formatTimeOutput struct {
	Formatted string `json:"formatted" jsonschema:"the time in the requested layout"`
}

type addDurationInput struct {
	Time     string `json:"time" jsonschema:"the starting date and time, in any format parse_time reads, or now"`
	Duration string `json:"duration" jsonschema:"what to add: number-unit pairs such as 1h30m, 90 minutes, 3 days, 2w, 1y 6mo (units y, mo, w, d, h, m, s, ms, us, ns and their full names), or ISO 8601 such as P1Y2M3DT4H5M6S; a leading - subtracts"`
	TimeZone string `json:"time_zone,omitempty" jsonschema:"the time zone for a time without an offset, and for calendar arithmetic; default UTC"`
}

type timeBetweenInput struct {
	Start    string `json:"start" jsonschema:"the earlier time, in any format parse_time reads"`
	End      string `json:"end,omitempty" jsonschema:"the later time; default now. If it is before start, the results are negative"`
	TimeZone string `json:"time_zone,omitempty" jsonschema:"the time zone for times without an offset, and in which calendar days are counted; default UTC"`
}

// timeInfo describes one instant as seen in one time zone.
type timeInfo struct {
	Time         string `json:"time" jsonschema:"the time in RFC 3339 with the zone's offset"`
	TimeZone     string `json:"time_zone" jsonschema:"the IANA time zone name, or the offset when there is no name"`
	Abbreviation string `json:"abbreviation" jsonschema:"the zone's abbreviation at that time, e.g. CEST"`
	UTCOffset    string `json:"utc_offset" jsonschema:"the offset from UTC, e.g. +02:00"`
	IsDST        bool   `json:"is_dst" jsonschema:"true when daylight saving time is in effect"`
	Date         string `json:"date" jsonschema:"the calendar date, YYYY-MM-DD"`
	Clock        string `json:"clock" jsonschema:"the wall-clock time, HH:MM:SS"`
	Weekday      string `json:"weekday" jsonschema:"the day of the week, e.g. Wednesday"`
	DayOfYear    int    `json:"day_of_year" jsonschema:"1 for January 1st"`
	ISOWeek      string `json:"iso_week" jsonschema:"the ISO 8601 week, e.g. 2024-W18"`
	Unix         int64  `json:"unix" jsonschema:"seconds since 1970-01-01T00:00:00Z"`
	UnixMillis   int64  `json:"unix_millis" jsonschema:"milliseconds since 1970-01-01T00:00:00Z"`
}

func describeTime(t time.Time) timeInfo {
	abbr, offset := t.Zone()
	name := t.Location().String()
	if name == "" || strings.HasPrefix(name, "+") || strings.HasPrefix(name, "-") {
		name = formatOffset(offset)
	}
	y, w := t.ISOWeek()
	return timeInfo{
		Time: t.Format(time.RFC3339Nano), TimeZone: name, Abbreviation: abbr, UTCOffset: formatOffset(offset),
		IsDST: t.IsDST(), Date: t.Format("2006-01-02"), Clock: t.Format("15:04:05"), Weekday: t.Weekday().String(),
		DayOfYear: t.YearDay(), ISOWeek: fmt.Sprintf("%04d-W%02d", y, w), Unix: t.Unix(), UnixMillis: t.UnixMilli(),
	}
}

func formatOffset(seconds int) string {
	sign := '+'
	if seconds < 0 {
		sign, seconds = '-', -seconds
	}
	return fmt.Sprintf("%c%02d:%02d", sign, seconds/3600, seconds%3600/60)
}

// zoneHints answers abbreviations people use that the tz database does not
// know (or knows as a fixed offset that ignores daylight saving).
var zoneHints = map[string]string{
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "PT": "America/Los_Angeles",
	"MDT": "America/Denver", "MT": "America/Denver", "CST": "America/Chicago", "CDT": "America/Chicago",
	"CT": "America/Chicago", "EDT": "America/New_York", "ET": "America/New_York", "BST": "Europe/London",
	"CEST": "Europe/Paris", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "AEST": "Australia/Sydney",
	"AEDT": "Australia/Sydney", "SGT": "Asia/Singapore",
}

var offsetZone = regexp.MustCompile(`^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$`)

// loadZone reads an IANA name, UTC, Local or a fixed offset; empty is UTC.
func loadZone(name, param string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	switch strings.ToUpper(name) {
	case "", "UTC", "Z", "GMT":
		return time.UTC, nil
	case "LOCAL":
		return time.Local, nil
	}
	if m := offsetZone.FindStringSubmatch(name); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
		}
		if h > 14 || mins > 59 {
			return nil, fmt.Errorf("%s %q is not a valid UTC offset: offsets run from -12:00 to +14:00", param, name)
		}
		secs := h*3600 + mins*60
		if m[1] == "-" {
			secs = -secs
		}
		return time.FixedZone(formatOffset(secs), secs), nil
	}
	if hint, ok := zoneHints[strings.ToUpper(name)]; ok {
		return nil, fmt.Errorf("%s %q is an abbreviation, which is ambiguous and ignores daylight saving: use the IANA name, probably %q", param, name, hint)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		// LoadLocation is case-sensitive; "europe/paris" is a common slip.
		if fixed := titleZone(name); fixed != name {
			if loc, err2 := time.LoadLocation(fixed); err2 == nil {
				return loc, nil
			}
		}
		return nil, fmt.Errorf("%s %q is not a known time zone: use an IANA name such as Europe/Paris, America/New_York or Asia/Tokyo, UTC, or an offset such as +05:30", param, name)
	}
	return loc, nil
}

// titleZone capitalises each part of a zone name: america/new_york becomes
// America/New_York.
func titleZone(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '_' })
	seps := []rune{}
	for _, r := range name {
		if r == '/' || r == '_' {
			seps = append(seps, r)
		}
	}
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.ToUpper(p[:1]) + strings.ToLower(p[1:]))
		if i < len(seps) {
			b.WriteRune(seps[i])
		}
	}
	return b.String()
}

// Layouts parseTime tries, most specific first. Those with a zone keep it;
// the others are read in the caller's zone.
var (
	zonedLayouts = []string{
		time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 -0700",
		"2006-01-02T15:04Z07:00", "2006-01-02 15:04Z07:00",
		time.RFC1123Z, time.RFC1123, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST",
		time.RFC822Z, time.RFC822, time.RFC850, time.UnixDate, time.RubyDate,
	}
	localLayouts = []string{
		"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04",
		"2006-01-02 3:04PM", "2006-01-02 3:04 PM", "2006-01-02", "2006/01/02 15:04:05", "2006/01/02 15:04", "2006/01/02",
		time.ANSIC, "Jan 2 2006", "Jan 2, 2006", "January 2 2006", "January 2, 2006",
		"Jan 2 2006 15:04", "Jan 2, 2006 15:04", "January 2, 2006 15:04", "Jan 2 2006 3:04PM", "Jan 2, 2006 3:04PM",
		"January 2, 2006 3:04PM", "January 2 2006 3:04PM", "Jan 2 2006 3:04 PM", "Jan 2, 2006 3:04 PM", "January 2, 2006 3:04 PM",
		"2 Jan 2006", "2 January 2006", "2 Jan 2006 15:04", "2 January 2006 15:04", "Monday, January 2, 2006", "Mon Jan 2 2006",
	}
	unixTimestamp = regexp.MustCompile(`^@?-?\d+(\.\d+)?$`)
)

// parseTime reads the many ways people write a time. A time without an
// offset is read in loc; "now" is the clock's time in loc.
func parseTime(param, s string, loc *time.Location, now func() time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errEmpty(param, `a date and time such as "2024-05-01T14:30:00Z", "2024-05-01 14:30" or "now"`)
	}
	if strings.EqualFold(s, "now") {
		return now().In(loc), nil
	}
	// Eight digits are far more likely a compact date (20240501) than a
	// Unix time in August 1970.
	if len(s) == 8 && s[0] != '@' {
		if t, err := time.ParseInLocation("20060102", s, loc); err == nil {
			return t, nil
		}
	}
	if unixTimestamp.MatchString(s) {
		return parseUnix(strings.TrimPrefix(s, "@"), loc)
	}
	for _, layout := range zonedLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	// Explain the most useful failure: the one from RFC 3339 when the text
	// looks like it, since that error names the bad field.
	if _, err := time.Parse(time.RFC3339, s); len(s) >= 10 && s[4] == '-' && err != nil && strings.ContainsAny(s, "T ") && strings.Contains(s, ":") {
		return time.Time{}, fmt.Errorf("%s: cannot read %q as a date and time: %w; use RFC 3339 such as 2024-05-01T14:30:00Z or 2024-05-01 14:30", param, s, err)
	}
	return time.Time{}, fmt.Errorf("%s: cannot read %q as a date and time: use RFC 3339 (2024-05-01T14:30:00+02:00), a date (2024-05-01), a date and time (2024-05-01 14:30), "+
		"a written date (May 1, 2024), a Unix timestamp (1714566600) or now", param, s)
}

// parseUnix reads seconds since the epoch, or milliseconds when the number
// has 13 or more digits: as seconds that would be after the year 33000.
func parseUnix(s string, loc *time.Location) (time.Time, error) {
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(whole) > 16 {
		return time.Time{}, fmt.Errorf("the Unix timestamp %q is too large: pass seconds (10 digits today) or milliseconds (13 digits)", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot read the Unix timestamp %q: %w", s, err)
	}
	if len(whole) >= 13 && frac == "" {
		ms, _ := strconv.ParseInt(s, 10, 64)
		return time.UnixMilli(ms).In(loc), nil
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64(math.Round((f-sec)*1e9))).In(loc), nil
}

var namedLayouts = map[string]string{
	"rfc3339": time.RFC3339, "rfc3339nano": time.RFC3339Nano, "rfc1123": time.RFC1123, "rfc1123z": time.RFC1123Z,
	"rfc822": time.RFC822, "rfc822z": time.RFC822Z, "rfc850": time.RFC850, "ansic": time.ANSIC, "unix_date": time.UnixDate,
	"kitchen": time.Kitchen, "date": time.DateOnly, "time": time.TimeOnly, "datetime": time.DateTime, "iso8601": time.RFC3339,
}

func formatTime(t time.Time, layout string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(layout))
	switch name {
	case "":
		return "", errEmpty("layout", `a layout such as "rfc3339", "%Y-%m-%d %H:%M" or "2006-01-02"`)
	case "unix":
		return strconv.FormatInt(t.Unix(), 10), nil
	case "unix_ms", "unix_millis":
		return strconv.FormatInt(t.UnixMilli(), 10), nil
	case "iso_week":
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04d-W%02d-%d", y, w, isoWeekday(t)), nil
	}
	if l, ok := namedLayouts[name]; ok {
		return t.Format(l), nil
	}
	if strings.Contains(layout, "%") {
		return strftime(t, layout)
	}
	// A Go layout must contain at least one element of the reference time,
	// or the "formatted" result is the layout itself, silently.
	if t.Format(layout) == layout {
		return "", fmt.Errorf("layout %q has no date or time fields: use a name (rfc3339, date, datetime, kitchen, unix, …), strftime codes (%%Y-%%m-%%d) or Go's reference time (2006-01-02 15:04:05)", layout)
	}
	return t.Format(layout), nil
}

func isoWeekday(t time.Time) int {
	if wd := int(t.Weekday()); wd != 0 {
		return wd
	}
	return 7
}

// strftime formats t with C's strftime codes, the ones people know from
// Python, PHP and date(1).
func strftime(t time.Time, pattern string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(pattern) {
			return "", fmt.Errorf("layout %q ends with a lone %%: write %%%% for a literal percent sign", pattern)
		}
		i++
		out, ok := strftimeCode(t, pattern[i])
		if !ok {
			return "", fmt.Errorf("layout %q uses %%%c, which is not a supported strftime code: use %%Y %%m %%d %%H %%M %%S %%f %%p %%I %%b %%B %%a %%A %%j %%u %%V %%G %%Z %%z %%s %%F %%T %%R %%D %%c or %%%%", pattern, pattern[i])
		}
		b.WriteString(out)
	}
	return b.String(), nil
}

// strftimeCode expands one strftime code; ok is false for a code it does
// not know. The codes are split by what they print so that each switch
// stays short.
func strftimeCode(t time.Time, code byte) (out string, ok bool) {
	if out, ok = strftimeDate(t, code); ok {
		return out, true
	}
	if out, ok = strftimeClock(t, code); ok {
		return out, true
	}
	if out, ok = strftimeName(t, code); ok {
		return out, true
	}
	return strftimeShorthand(t, code)
}

// strftimeDate expands the numeric calendar codes.
func strftimeDate(t time.Time, code byte) (string, bool) {
	switch code {
	case 'Y':
		return fmt.Sprintf("%04d", t.Year()), true
	case 'y':
		return fmt.Sprintf("%02d", t.Year()%100), true
	case 'm':
		return fmt.Sprintf("%02d", int(t.Month())), true
	case 'd':
		return fmt.Sprintf("%02d", t.Day()), true
	case 'e':
		return fmt.Sprintf("%2d", t.Day()), true
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay()), true
	case 'u':
		return fmt.Sprintf("%d", isoWeekday(t)), true
	case 'w':
		return fmt.Sprintf("%d", int(t.Weekday())), true
	case 'V':
		_, w := t.ISOWeek()
		return fmt.Sprintf("%02d", w), true
	case 'G':
		y, _ := t.ISOWeek()
		return fmt.Sprintf("%04d", y), true
	}
	return "", false
}

// strftimeClock expands the time-of-day codes and the Unix time.
func strftimeClock(t time.Time, code byte) (string, bool) {
	switch code {
	case 'H':
		return fmt.Sprintf("%02d", t.Hour()), true
	case 'I':
		return fmt.Sprintf("%02d", (t.Hour()+11)%12+1), true
	case 'M':
		return fmt.Sprintf("%02d", t.Minute()), true
	case 'S':
		return fmt.Sprintf("%02d", t.Second()), true
	case 'f':
		return fmt.Sprintf("%06d", t.Nanosecond()/1000), true
	case 'L':
		return fmt.Sprintf("%03d", t.Nanosecond()/1e6), true
	case 'p':
		return t.Format("PM"), true
	case 's':
		return fmt.Sprintf("%d", t.Unix()), true
	}
	return "", false
}

// strftimeName expands the codes that print names: months, weekdays and
// zones.
func strftimeName(t time.Time, code byte) (string, bool) {
	switch code {
	case 'b', 'h':
		return t.Format("Jan"), true
	case 'B':
		return t.Month().String(), true
	case 'a':
		return t.Format("Mon"), true
	case 'A':
		return t.Weekday().String(), true
	case 'Z':
		abbr, _ := t.Zone()
		return abbr, true
	case 'z':
		return t.Format("-0700"), true
	}
	return "", false
}

// strftimeShorthand expands the codes that stand for whole layouts or for
// a single character.
func strftimeShorthand(t time.Time, code byte) (string, bool) {
	switch code {
	case 'F':
		return t.Format("2006-01-02"), true
	case 'T':
		return t.Format("15:04:05"), true
	case 'R':
		return t.Format("15:04"), true
	case 'D':
		return t.Format("01/02/06"), true
	case 'c':
		return t.Format("Mon Jan  2 15:04:05 2006"), true
	case 'n':
		return "\n", true
	case 't':
		return "\t", true
	case '%':
		return "%", true
	}
	return "", false
}

// calendarDuration is a duration with calendar parts (added with AddDate,
// so that "1 month" from January 31 follows Go's normalisation and "1 day"
// keeps the wall-clock time across a DST change) and an exact part.
type calendarDuration struct {
	years, months, days int
	exact               time.Duration
}

func (d calendarDuration) addTo(t time.Time) time.Time {
	return t.AddDate(d.years, d.months, d.days).Add(d.exact)
}

var (
	isoDuration  = regexp.MustCompile(`^([+-])?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$`)
	durationPart = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([a-zµ]+)`)
)

// durationUnits maps unit names to either a calendar part or an exact
// length.
var durationUnits = map[string]struct {
	calendar string // "y", "mo" or "d"
	days     int    // for "d": days per unit (7 for weeks)
	exact    time.Duration
}{
	"y": {calendar: "y"}, "yr": {calendar: "y"}, "yrs": {calendar: "y"}, "year": {calendar: "y"}, "years": {calendar: "y"},
	"mo": {calendar: "mo"}, "mon": {calendar: "mo"}, "month": {calendar: "mo"}, "months": {calendar: "mo"},
	"w": {calendar: "d", days: 7}, "wk": {calendar: "d", days: 7}, "week": {calendar: "d", days: 7}, "weeks": {calendar: "d", days: 7},
	"d": {calendar: "d", days: 1}, "day": {calendar: "d", days: 1}, "days": {calendar: "d", days: 1},
	"h": {exact: time.Hour}, "hr": {exact: time.Hour}, "hrs": {exact: time.Hour}, "hour": {exact: time.Hour}, "hours": {exact: time.Hour},
	"m": {exact: time.Minute}, "min": {exact: time.Minute}, "mins": {exact: time.Minute}, "minute": {exact: time.Minute}, "minutes": {exact: time.Minute},
	"s": {exact: time.Second}, "sec": {exact: time.Second}, "secs": {exact: time.Second}, "second": {exact: time.Second}, "seconds": {exact: time.Second},
	"ms": {exact: time.Millisecond}, "millisecond": {exact: time.Millisecond}, "milliseconds": {exact: time.Millisecond},
	"us": {exact: time.Microsecond}, "µs": {exact: time.Microsecond}, "microsecond": {exact: time.Microsecond}, "microseconds": {exact: time.Microsecond},
	"ns": {exact: time.Nanosecond}, "nanosecond": {exact: time.Nanosecond}, "nanoseconds": {exact: time.Nanosecond},
}

// maxCalendarAmount keeps calendar parts within a range where AddDate and
// the int arithmetic cannot overflow.
const maxCalendarAmount = 1_000_000

func parseCalendarDuration(s string) (calendarDuration, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return calendarDuration{}, errEmpty("duration", `a duration such as "1h30m", "3 days" or "P1DT12H"`)
	}
	if m := isoDuration.FindStringSubmatch(strings.ToUpper(s)); m != nil && len(s) > 1 && !strings.HasSuffix(strings.ToUpper(s), "T") {
		return isoCalendarDuration(orig, m)
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, strings.TrimSpace(s[1:])
	case '+':
		s = strings.TrimSpace(s[1:])
	}
	d, err := unitCalendarDuration(orig, strings.ToLower(s))
	if neg {
		d = d.negate()
	}
	return d, err
}

// isoCalendarDuration builds the duration from the groups of isoDuration
// that matched orig.
func isoCalendarDuration(orig string, m []string) (calendarDuration, error) {
	num := func(i int) int { n, _ := strconv.Atoi(m[i]); return n }
	d := calendarDuration{years: num(2), months: num(3), days: num(4)*7 + num(5)}
	for _, v := range []int{d.years, d.months, d.days} {
		if v > maxCalendarAmount {
			return calendarDuration{}, fmt.Errorf("duration %q is too long: keep each part under %d", orig, maxCalendarAmount)
		}
	}
	secs, _ := strconv.ParseFloat(strings.ReplaceAll(m[8], ",", "."), 64)
	exact := float64(num(6))*3600 + float64(num(7))*60 + secs
	if exact > math.MaxInt64/1e9 {
		return calendarDuration{}, fmt.Errorf("duration %q is too long: the hours, minutes and seconds must stay under 290 years", orig)
	}
	d.exact = time.Duration(exact * 1e9)
	if m[1] == "-" {
		d = d.negate()
	}
	if m[2]+m[3]+m[4]+m[5]+m[6]+m[7]+m[8] == "" {
		return calendarDuration{}, fmt.Errorf("duration %q has no parts: write e.g. P1D or PT2H", orig)
	}
	return d, nil
}

// unitCalendarDuration reads number-unit pairs such as "1h30m" or "2 weeks
// and 1 day" from rest, which is lower-cased and has no sign.
func unitCalendarDuration(orig, rest string) (calendarDuration, error) {
	var d calendarDuration
	if rest == "" {
		return calendarDuration{}, fmt.Errorf("duration %q has no amount: write e.g. 2h or 3 days", orig)
	}
	for rest != "" {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return calendarDuration{}, fmt.Errorf("cannot read duration %q at %q: write number-unit pairs such as 1h30m, 3 days, 2w 1d or ISO 8601 such as P1DT12H", orig, rest)
		}
		if err := d.addPart(orig, m[1], m[2]); err != nil {
			return calendarDuration{}, err
		}
		rest = strings.TrimLeft(rest[len(m[0]):], " ,")
		rest = strings.TrimPrefix(rest, "and ")
	}
	return d, nil
}

// addPart adds number of unit to d; orig is the whole duration, for the
// error messages.
func (d *calendarDuration) addPart(orig, number, unit string) error {
	u, ok := durationUnits[unit]
	if !ok {
		return fmt.Errorf("duration %q has the unknown unit %q: use y, mo, w, d, h, m, s, ms, us or ns (or their names: years, months, weeks, days, hours, minutes, seconds)", orig, unit)
	}
	amount, err := strconv.ParseFloat(number, 64)
	if err != nil {
		return fmt.Errorf("duration %q: %w", orig, err)
	}
	if u.calendar == "" {
		add := amount * float64(u.exact)
		if math.Abs(float64(d.exact)+add) > math.MaxInt64 {
			return fmt.Errorf("duration %q is too long: the hours, minutes and seconds must stay under 290 years", orig)
		}
		d.exact += time.Duration(add)
		return nil
	}
	if amount != math.Trunc(amount) {
		return fmt.Errorf("duration %q has a fractional %s: calendar units (years, months, weeks, days) must be whole; use hours for the rest", orig, unit)
	}
	if amount > maxCalendarAmount {
		return fmt.Errorf("duration %q is too long: keep each part under %d", orig, maxCalendarAmount)
	}
	switch u.calendar {
	case "y":
		d.years += int(amount)
	case "mo":
		d.months += int(amount)
	case "d":
		d.days += int(amount) * u.days
	}
	return nil
}

func (d calendarDuration) negate() calendarDuration {
	return calendarDuration{-d.years, -d.months, -d.days, -d.exact}
}

type calendarDiff struct {
	Years   int `json:"years" jsonschema:"whole years"`
	Months  int `json:"months" jsonschema:"whole months after the years"`
	Days    int `json:"days" jsonschema:"whole days after the months"`
	Hours   int `json:"hours" jsonschema:"hours after the days"`
	Minutes int `json:"minutes" jsonschema:"minutes after the hours"`
	Seconds int `json:"seconds" jsonschema:"seconds after the minutes"`
}

type timeBetweenOutput struct {
	Start    string       `json:"start" jsonschema:"start in RFC 3339"`
	End      string       `json:"end" jsonschema:"end in RFC 3339"`
	Seconds  float64      `json:"seconds" jsonschema:"the exact difference in seconds, negative when end is before start"`
	Days     float64      `json:"days" jsonschema:"the exact difference in 24-hour days, rounded to 4 decimals"`
	Duration string       `json:"duration" jsonschema:"the exact difference as hours, minutes and seconds, e.g. 50h30m0s"`
	Calendar calendarDiff `json:"calendar" jsonschema:"the difference on the calendar (of start's time zone), all parts negative when end is before start"`
	Human    string       `json:"human" jsonschema:"the calendar difference in words, e.g. 1 year, 2 months and 3 days"`
	Weekdays int          `json:"weekdays" jsonschema:"Mondays to Fridays from start's date up to but not including end's date (negative when end is before start)"`
}

func timeBetween(start, end time.Time) timeBetweenOutput {
	out := timeBetweenOutput{Start: start.Format(time.RFC3339Nano), End: end.Format(time.RFC3339Nano)}
	// From Unix seconds rather than end.Sub(start), which saturates at
	// about 292 years.
	out.Seconds = float64(end.Unix()-start.Unix()) + float64(end.Nanosecond()-start.Nanosecond())/1e9
	out.Days = roundTo(out.Seconds/86400, 4)
	if math.Abs(out.Seconds) < math.MaxInt64/1e9 {
		out.Duration = end.Sub(start).String()
	} else {
		out.Duration = "more than 292 years: see calendar"
	}
	sign := 1
	a, b := start, end.In(start.Location())
	if b.Before(a) {
		a, b, sign = b, a, -1
	}
	c := calendarDifference(a, b)
	out.Human = humanDiff(c)
	if sign < 0 {
		out.Human = "minus " + out.Human
		c = calendarDiff{-c.Years, -c.Months, -c.Days, -c.Hours, -c.Minutes, -c.Seconds}
	}
	out.Calendar = c
	out.Weekdays = sign * weekdaysBetween(a, b)
	return out
}

// calendarDifference counts whole years, months, days, … from a to b
// (a <= b, same location) the way a person counts on a calendar: as many
// whole months as fit, where a month from the 31st ends on the last day of
// a shorter month, then the days and time of day that remain, measured on
// the wall clock (so a DST change does not turn a day into 23 hours).
func calendarDifference(a, b time.Time) calendarDiff {
	months := (b.Year()-a.Year())*12 + int(b.Month()) - int(a.Month())
	anchor := addMonthsClamped(a, months)
	for months > 0 && wallClock(anchor).After(wallClock(b)) {
		months--
		anchor = addMonthsClamped(a, months)
	}
	rest := wallClock(b).Sub(wallClock(anchor))
	if rest < 0 {
		// Only in the repeated hour when clocks go back: use real time.
		rest = b.Sub(anchor)
	}
	days := int(rest / (24 * time.Hour))
	rest -= time.Duration(days) * 24 * time.Hour
	return calendarDiff{
		Years: months / 12, Months: months % 12, Days: days,
		Hours: int(rest / time.Hour), Minutes: int(rest % time.Hour / time.Minute), Seconds: int(rest % time.Minute / time.Second),
	}
}

// addMonthsClamped adds months to t, keeping its day of the month but
// clamping it to the length of the target month (January 31 plus one month
// is February 28 or 29, not March 2 or 3 as with AddDate).
func addMonthsClamped(t time.Time, months int) time.Time {
	y, m := t.Year(), int(t.Month())-1+months
	y += m / 12
	m %= 12
	if m < 0 {
		m += 12
		y--
	}
	last := time.Date(y, time.Month(m+2), 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(y, time.Month(m+1), min(t.Day(), last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// wallClock is t's wall-clock reading as if it were UTC, so differences
// between two readings ignore offset changes.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

func humanDiff(c calendarDiff) string {
	var parts []string
	add := func(n int, unit string) {
		if n == 0 {
			return
		}
		if n != 1 {
			unit += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, unit))
	}
	add(c.Years, "year")
	add(c.Months, "month")
	add(c.Days, "day")
	add(c.Hours, "hour")
	add(c.Minutes, "minute")
	add(c.Seconds, "second")
	switch len(parts) {
	case 0:
		return "0 seconds"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// weekdaysBetween counts Monday to Friday dates in [a's date, b's date).
func weekdaysBetween(a, b time.Time) int {
	da := time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)
	db := time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC)
	days := int((db.Unix() - da.Unix()) / 86400)
	full := days / 7
	n := full * 5
	wd := da.Weekday()
	for i := 0; i < days%7; i++ {
		if w := (wd + time.Weekday(i)) % 7; w != time.Saturday && w != time.Sunday {
			n++
		}
	}
	return n
}

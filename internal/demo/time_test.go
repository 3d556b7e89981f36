package demo

import (
	"testing"
	"time"
)

func TestCurrentTime(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		zone string
		want timeInfo
	}{
		{"", timeInfo{Time: "2024-05-01T12:00:00Z", TimeZone: "UTC", Abbreviation: "UTC", UTCOffset: "+00:00",
			Date: "2024-05-01", Clock: "12:00:00", Weekday: "Wednesday", DayOfYear: 122, ISOWeek: "2024-W18",
			Unix: 1714564800, UnixMillis: 1714564800000}},
		{"Europe/Paris", timeInfo{Time: "2024-05-01T14:00:00+02:00", TimeZone: "Europe/Paris", Abbreviation: "CEST",
			UTCOffset: "+02:00", IsDST: true, Date: "2024-05-01", Clock: "14:00:00", Weekday: "Wednesday", DayOfYear: 122,
			ISOWeek: "2024-W18", Unix: 1714564800, UnixMillis: 1714564800000}},
		{"Asia/Kolkata", timeInfo{Time: "2024-05-01T17:30:00+05:30", TimeZone: "Asia/Kolkata", Abbreviation: "IST",
			UTCOffset: "+05:30", Date: "2024-05-01", Clock: "17:30:00", Weekday: "Wednesday", DayOfYear: 122,
			ISOWeek: "2024-W18", Unix: 1714564800, UnixMillis: 1714564800000}},
		{"-03:00", timeInfo{Time: "2024-05-01T09:00:00-03:00", TimeZone: "-03:00", Abbreviation: "-03:00", UTCOffset: "-03:00",
			Date: "2024-05-01", Clock: "09:00:00", Weekday: "Wednesday", DayOfYear: 122, ISOWeek: "2024-W18",
			Unix: 1714564800, UnixMillis: 1714564800000}},
	}
	for _, tt := range tests {
		if got := callOK[timeInfo](c, "current_time", map[string]any{"time_zone": tt.zone}); got != tt.want {
			t.Errorf("current_time(%q) =\n%+v\nwant\n%+v", tt.zone, got, tt.want)
		}
	}
	// A lower-case IANA name is forgiven; an abbreviation gets the IANA name.
	if got := callOK[timeInfo](c, "current_time", map[string]any{"time_zone": "america/new_york"}); got.Time != "2024-05-01T08:00:00-04:00" {
		t.Errorf("america/new_york: %s", got.Time)
	}
	c.callErr("current_time", map[string]any{"time_zone": "PST"}, "America/Los_Angeles")
	c.callErr("current_time", map[string]any{"time_zone": "Mars/Olympus"}, "not a known time zone", "Europe/Paris")
	c.callErr("current_time", map[string]any{"time_zone": "+15:00"}, "not a valid UTC offset")
}

func TestConvertTimeZone(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"time": "2024-05-01 09:00", "from_zone": "America/New_York", "to_zone": "Asia/Tokyo"}, "2024-05-01T22:00:00+09:00"},
		{map[string]any{"time": "2024-01-15T12:00:00Z", "to_zone": "Europe/London"}, "2024-01-15T12:00:00Z"},
		{map[string]any{"time": "2024-07-15T12:00:00Z", "to_zone": "Europe/London"}, "2024-07-15T13:00:00+01:00"},
		// An explicit offset wins over from_zone.
		{map[string]any{"time": "2024-05-01T09:00:00+02:00", "from_zone": "Asia/Tokyo", "to_zone": "UTC"}, "2024-05-01T07:00:00Z"},
		{map[string]any{"time": "now", "to_zone": "Australia/Sydney"}, "2024-05-01T22:00:00+10:00"},
	}
	for _, tt := range tests {
		if got := callOK[timeInfo](c, "convert_time_zone", tt.args); got.Time != tt.want {
			t.Errorf("convert_time_zone(%v) = %s, want %s", tt.args, got.Time, tt.want)
		}
	}
	c.callErr("convert_time_zone", map[string]any{"time": "now", "to_zone": ""}, "to_zone is empty")
}

func TestParseTime(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		text, zone, want string
	}{
		{"2024-05-01T14:30:00+02:00", "", "2024-05-01T14:30:00+02:00"},
		{"2024-05-01T14:30:00.123Z", "", "2024-05-01T14:30:00.123Z"},
		{"2024-05-01", "", "2024-05-01T00:00:00Z"},
		{"2024-05-01 14:30", "Europe/Berlin", "2024-05-01T14:30:00+02:00"},
		{"20240501", "", "2024-05-01T00:00:00Z"},
		{"May 1, 2024", "", "2024-05-01T00:00:00Z"},
		{"1 May 2024 09:15", "", "2024-05-01T09:15:00Z"},
		{"Jan 2, 2006 3:04PM", "", "2006-01-02T15:04:00Z"},
		{"Wed, 01 May 2024 14:30:00 GMT", "", "2024-05-01T14:30:00Z"},
		{"Wed, 01 May 2024 14:30:00 +0200", "", "2024-05-01T14:30:00+02:00"},
		{"1714564800", "", "2024-05-01T12:00:00Z"},
		{"1714564800500", "", "2024-05-01T12:00:00.5Z"},
		{"1714564800.25", "", "2024-05-01T12:00:00.25Z"},
		{"now", "Asia/Tokyo", "2024-05-01T21:00:00+09:00"},
	}
	for _, tt := range tests {
		got := callOK[timeInfo](c, "parse_time", map[string]any{"text": tt.text, "time_zone": tt.zone})
		if got.Time != tt.want {
			t.Errorf("parse_time(%q, %q) = %s, want %s", tt.text, tt.zone, got.Time, tt.want)
		}
	}
	c.callErr("parse_time", map[string]any{"text": "next tuesday"}, `text: cannot read "next tuesday" as a date and time`, "RFC 3339")
	c.callErr("parse_time", map[string]any{"text": "2024-13-01 10:00"}, "month out of range")
}

func TestFormatTime(t *testing.T) {
	c := newClient(t)
	const when = "2024-05-01T14:05:09.123456Z"
	tests := []struct {
		layout, zone, want string
	}{
		{"rfc3339", "", "2024-05-01T14:05:09Z"},
		{"rfc1123", "", "Wed, 01 May 2024 14:05:09 UTC"},
		{"kitchen", "", "2:05PM"},
		{"date", "", "2024-05-01"},
		{"datetime", "America/Los_Angeles", "2024-05-01 07:05:09"},
		{"unix", "", "1714572309"},
		{"unix_ms", "", "1714572309123"},
		{"iso_week", "", "2024-W18-3"},
		{"%Y-%m-%d %H:%M:%S", "", "2024-05-01 14:05:09"},
		{"%A %e %B %Y, %I:%M %p", "", "Wednesday  1 May 2024, 02:05 PM"},
		{"%a %b %d %j %u %w %V %G %y", "", "Wed May 01 122 3 3 18 2024 24"},
		{"%F %T.%f %Z %z %%", "Europe/Paris", "2024-05-01 16:05:09.123456 CEST +0200 %"},
		{"%s %L %R %D", "", "1714572309 123 14:05 05/01/24"},
		{"02/01/2006 15h04", "", "01/05/2024 14h05"},
	}
	for _, tt := range tests {
		got := callOK[formatTimeOutput](c, "format_time", map[string]any{"time": when, "layout": tt.layout, "time_zone": tt.zone})
		if got.Formatted != tt.want {
			t.Errorf("format_time(%q, %q) = %q, want %q", tt.layout, tt.zone, got.Formatted, tt.want)
		}
	}
	c.callErr("format_time", map[string]any{"time": when, "layout": "%Q"}, "%Q", "not a supported strftime code")
	c.callErr("format_time", map[string]any{"time": when, "layout": "yyyy-mm-dd"}, "no date or time fields")
	c.callErr("format_time", map[string]any{"time": when, "layout": "100%"}, "lone %")
}

func TestAddDuration(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		time, duration, zone, want string
	}{
		{"2024-05-01T12:00:00Z", "1h30m", "", "2024-05-01T13:30:00Z"},
		{"2024-05-01T12:00:00Z", "-90 minutes", "", "2024-05-01T10:30:00Z"},
		{"2024-05-01T12:00:00Z", "3 days", "", "2024-05-04T12:00:00Z"},
		{"2024-05-01T12:00:00Z", "2w 1d", "", "2024-05-16T12:00:00Z"},
		{"2024-05-01T12:00:00Z", "1y6mo", "", "2025-11-01T12:00:00Z"},
		{"2024-05-01T12:00:00Z", "1 year, 2 months and 3 days", "", "2025-07-04T12:00:00Z"},
		{"2024-05-01T12:00:00Z", "P1DT12H", "", "2024-05-03T00:00:00Z"},
		{"2024-05-01T12:00:00Z", "-P1M", "", "2024-04-01T12:00:00Z"},
		{"2024-05-01T12:00:00Z", "PT0.5S", "", "2024-05-01T12:00:00.5Z"},
		{"2024-01-31", "1mo", "", "2024-03-02T00:00:00Z"}, // Go's normalisation of February 31
		// A calendar day across the spring DST change keeps the wall clock
		// (23 hours later); 24h is exact.
		{"2024-03-30 12:00", "1d", "Europe/Paris", "2024-03-31T12:00:00+02:00"},
		{"2024-03-30 12:00", "24h", "Europe/Paris", "2024-03-31T13:00:00+02:00"},
		{"now", "1h", "", "2024-05-01T13:00:00Z"},
	}
	for _, tt := range tests {
		got := callOK[timeInfo](c, "add_duration", map[string]any{"time": tt.time, "duration": tt.duration, "time_zone": tt.zone})
		if got.Time != tt.want {
			t.Errorf("add_duration(%s + %s in %q) = %s, want %s", tt.time, tt.duration, tt.zone, got.Time, tt.want)
		}
	}
	c.callErr("add_duration", map[string]any{"time": "now", "duration": "3 fortnights"}, `unknown unit "fortnights"`)
	c.callErr("add_duration", map[string]any{"time": "now", "duration": "1.5 days"}, "must be whole")
	c.callErr("add_duration", map[string]any{"time": "now", "duration": "P"}, "cannot read duration")
	c.callErr("add_duration", map[string]any{"time": "now", "duration": ""}, "duration is empty")
	c.callErr("add_duration", map[string]any{"time": "now", "duration": "999999999999h"}, "too long")
}

func TestTimeBetween(t *testing.T) {
	c := newClient(t)
	got := callOK[timeBetweenOutput](c, "time_between", map[string]any{"start": "2023-01-31T10:00:00Z", "end": "2024-03-01T12:30:15Z"})
	want := timeBetweenOutput{
		Start: "2023-01-31T10:00:00Z", End: "2024-03-01T12:30:15Z",
		Seconds: 34137015, Days: 395.1043, Duration: "9482h30m15s",
		Calendar: calendarDiff{Years: 1, Months: 1, Days: 1, Hours: 2, Minutes: 30, Seconds: 15},
		Human:    "1 year, 1 month, 1 day, 2 hours, 30 minutes and 15 seconds",
		Weekdays: 283,
	}
	if got != want {
		t.Errorf("time_between =\n%+v\nwant\n%+v", got, want)
	}

	// end defaults to now; a start after end gives negative results.
	back := callOK[timeBetweenOutput](c, "time_between", map[string]any{"start": "2024-05-08"})
	if back.Seconds != -7*86400+12*3600 || back.Calendar.Days != -6 || back.Calendar.Hours != -12 || back.Human != "minus 6 days and 12 hours" || back.Weekdays != -5 {
		t.Errorf("time_between to now = %+v", back)
	}

	week := callOK[timeBetweenOutput](c, "time_between", map[string]any{"start": "2024-04-29", "end": "2024-05-06"})
	if week.Weekdays != 5 || week.Human != "7 days" {
		t.Errorf("one week = %+v", week)
	}

	month := callOK[timeBetweenOutput](c, "time_between", map[string]any{"start": "2024-01-31", "end": "2024-02-29"})
	if month.Human != "1 month" {
		t.Errorf("January 31 to February 29 = %q, want 1 month", month.Human)
	}
	// Across the spring DST change a calendar day is still one day.
	dst := callOK[timeBetweenOutput](c, "time_between", map[string]any{"start": "2024-03-30 12:00", "end": "2024-03-31 12:00", "time_zone": "Europe/Paris"})
	if dst.Human != "1 day" || dst.Seconds != 23*3600 {
		t.Errorf("across DST = %q, %v s", dst.Human, dst.Seconds)
	}

	long := callOK[timeBetweenOutput](c, "time_between", map[string]any{"start": "1600-01-01", "end": "2024-01-01"})
	if long.Calendar.Years != 424 || long.Duration != "more than 292 years: see calendar" {
		t.Errorf("424 years = %+v", long)
	}
	c.callErr("time_between", map[string]any{"start": "yesterday"}, `start: cannot read "yesterday"`)
}

// TestWeekdaysBetween checks the weekday count against a day-by-day count.
func TestWeekdaysBetween(t *testing.T) {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for from := 0; from < 14; from++ {
		for span := 0; span < 40; span++ {
			a := base.AddDate(0, 0, from)
			b := a.AddDate(0, 0, span)
			want := 0
			for d := a; d.Before(b); d = d.AddDate(0, 0, 1) {
				if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
					want++
				}
			}
			if got := weekdaysBetween(a, b); got != want {
				t.Fatalf("weekdaysBetween(%s, %s) = %d, want %d", a.Format(time.DateOnly), b.Format(time.DateOnly), got, want)
			}
		}
	}
}

package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

func date(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestDayBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		zone      string
		day       string
		wantStart string // RFC 3339, UTC
		wantHours float64
	}{
		{"ordinary_day_in_warsaw", "Europe/Warsaw", "2026-11-26", "2026-11-25T23:00:00Z", 24},
		{"dst_spring_day_has_23_hours", "Europe/Warsaw", "2026-03-29", "2026-03-28T23:00:00Z", 23},
		{"dst_autumn_day_has_25_hours", "Europe/Warsaw", "2026-10-25", "2026-10-24T22:00:00Z", 25},
		{"day_after_autumn_dst", "Europe/Warsaw", "2026-10-26", "2026-10-25T23:00:00Z", 24},
		{"half_hour_zone", "Asia/Kolkata", "2026-11-26", "2026-11-25T18:30:00Z", 24},
		{"utc", "UTC", "2026-11-26", "2026-11-26T00:00:00Z", 24},
		{"far_west_zone", "Pacific/Pago_Pago", "2026-11-26", "2026-11-26T11:00:00Z", 24},
		{"far_east_zone", "Pacific/Kiritimati", "2026-11-26", "2026-11-25T10:00:00Z", 24},
		// Chile moves its clocks from 24:00 to 01:00: midnight does not exist,
		// the day begins at the transition and has 23 hours.
		{"midnight_in_dst_gap_starts_at_transition", "America/Santiago", "2026-09-06", "2026-09-06T04:00:00Z", 23},
		{"day_before_midnight_gap_is_whole", "America/Santiago", "2026-09-05", "2026-09-05T04:00:00Z", 24},
		// Cuba falls back from 01:00 to 00:00: midnight happens twice and
		// the day starts at the first.
		{"midnight_twice_starts_at_first", "America/Havana", "2026-11-01", "2026-11-01T04:00:00Z", 25},
		{"new_year_in_new_york", "America/New_York", "2027-01-01", "2027-01-01T05:00:00Z", 24},
		{"leap_day", "Asia/Tokyo", "2028-02-29", "2028-02-28T15:00:00Z", 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustLoad(t, tt.zone)
			start, end := date(tt.day).Bounds(loc)
			if got := start.UTC().Format(time.RFC3339); got != tt.wantStart {
				t.Errorf("start = %s, want %s", got, tt.wantStart)
			}
			if got := end.Sub(start).Hours(); got != tt.wantHours {
				t.Errorf("hours = %v, want %v", got, tt.wantHours)
			}
			if got := date(tt.day).Hours(loc); got != tt.wantHours {
				t.Errorf("Hours() = %v, want %v", got, tt.wantHours)
			}
			// Consecutive days tile the time line: this day's end is the
			// next day's start, and the instant before it is still this day.
			nextStart, _ := date(tt.day).AddDays(1).Bounds(loc)
			if !end.Equal(nextStart) {
				t.Errorf("end %s != next day's start %s", end, nextStart)
			}
			if got := DateOf(end.Add(-time.Millisecond).In(loc)); got != date(tt.day) {
				t.Errorf("last millisecond is on %s, want %s", got, tt.day)
			}
			if got := DateOf(start.In(loc)); got != date(tt.day) {
				t.Errorf("first instant is on %s, want %s", got, tt.day)
			}
		})
	}
}

// Every day of several years tiles the time line in zones with unusual
// rules, so no click can fall between two days or into two.
func TestDaysTileTheTimeLine(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"Europe/Warsaw", "America/Santiago", "America/Havana", "Asia/Beirut", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns"} {
		loc := mustLoad(t, zone)
		d := date("2025-01-01")
		_, prevEnd := d.AddDays(-1).Bounds(loc)
		for ; d.Before(date("2028-01-01")); d = d.AddDays(1) {
			start, end := d.Bounds(loc)
			if !start.Equal(prevEnd) {
				t.Fatalf("%s %s starts at %s, previous day ended at %s", zone, d, start, prevEnd)
			}
			if h := end.Sub(start).Hours(); h < 22 || h > 26 {
				t.Fatalf("%s %s has %v hours", zone, d, h)
			}
			if got := DateOf(start.In(loc)); got != d {
				t.Fatalf("%s %s starts on local date %s", zone, d, got)
			}
			prevEnd = end
		}
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "2026-2-03", "2026-02-30", "26-11-2026", "2026/11/26", "2026-11-26T00:00:00Z", "yesterday", "2026-13-01"} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q) succeeded, want an error", bad)
		}
	}
	// A date in the right form whose day does not exist is told as such,
	// not as a date in the wrong form.
	for s, want := range map[string]string{
		"2026-11-31": `"2026-11-31" is not a date: no such day in the calendar`,
		"2026-13-01": `"2026-13-01" is not a date: no such day in the calendar`,
		"2026-2-03":  `"2026-2-03" is not a date in YYYY-MM-DD form`,
	} {
		if _, err := ParseDate(s); err == nil || err.Error() != want {
			t.Errorf("ParseDate(%q) error = %v, want %s", s, err, want)
		}
	}
	if got := date("2024-02-29").AddDays(365).String(); got != "2025-02-28" {
		t.Errorf("AddDays across a leap year = %s", got)
	}
}

func TestNewWindow(t *testing.T) {
	t.Parallel()
	warsaw := mustLoad(t, "Europe/Warsaw")
	kiritimati := mustLoad(t, "Pacific/Kiritimati") // UTC+14
	pagoPago := mustLoad(t, "Pacific/Pago_Pago")    // UTC-11
	now := time.Date(2026, 11, 29, 3, 0, 12, 0, time.UTC)
	tests := []struct {
		name     string
		spec     WindowSpec
		loc      *time.Location
		now      time.Time
		wantFrom string
		wantTo   string
		wantErr  string
	}{
		{name: "default_is_last_three_days", spec: WindowSpec{Days: 3, MaxDays: 400}, loc: warsaw, now: now, wantFrom: "2026-11-26", wantTo: "2026-11-28"},
		// 10:30 UTC on the 29th is already the 30th in Kiritimati.
		{name: "default_far_east_after_its_midnight", spec: WindowSpec{Days: 3}, loc: kiritimati, now: time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC), wantFrom: "2026-11-27", wantTo: "2026-11-29"},
		{name: "default_far_east_before_its_midnight", spec: WindowSpec{Days: 3}, loc: kiritimati, now: time.Date(2026, 11, 29, 9, 59, 0, 0, time.UTC), wantFrom: "2026-11-26", wantTo: "2026-11-28"},
		// 05:00 UTC on the 29th is still the 28th in Pago Pago.
		{name: "default_far_west_still_yesterday", spec: WindowSpec{Days: 3}, loc: pagoPago, now: time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC), wantFrom: "2026-11-25", wantTo: "2026-11-27"},
		{name: "default_exactly_at_midnight", spec: WindowSpec{Days: 1}, loc: warsaw, now: time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC), wantFrom: "2026-11-28", wantTo: "2026-11-28"},
		{name: "one_date", spec: WindowSpec{Date: "2026-10-25", MaxDays: 400}, loc: warsaw, now: now, wantFrom: "2026-10-25", wantTo: "2026-10-25"},
		{name: "range", spec: WindowSpec{From: "2026-01-01", To: "2026-11-28", MaxDays: 400}, loc: warsaw, now: now, wantFrom: "2026-01-01", wantTo: "2026-11-28"},
		{name: "range_of_max_days", spec: WindowSpec{From: "2026-01-01", To: "2026-01-10", MaxDays: 10}, loc: warsaw, now: now, wantFrom: "2026-01-01", wantTo: "2026-01-10"},
		{name: "range_over_max_days", spec: WindowSpec{From: "2026-01-01", To: "2026-01-11", MaxDays: 10}, loc: warsaw, now: now, wantErr: "RECON_MAX_DAYS=10"},
		{name: "from_after_to", spec: WindowSpec{From: "2026-11-28", To: "2026-11-26"}, loc: warsaw, now: now, wantErr: "--from 2026-11-28 is after --to 2026-11-26"},
		{name: "today_has_not_ended", spec: WindowSpec{Date: "2026-11-29"}, loc: warsaw, now: now, wantErr: "has not ended"},
		{name: "future_range", spec: WindowSpec{From: "2026-11-20", To: "2026-12-01"}, loc: warsaw, now: now, wantErr: "has not ended"},
		{name: "today_in_far_west_zone_has_not_ended", spec: WindowSpec{Date: "2026-11-28"}, loc: pagoPago, now: now, wantErr: "has not ended"},
		{name: "malformed_date", spec: WindowSpec{Date: "2026-11-31"}, loc: warsaw, now: now, wantErr: "--date"},
		{name: "malformed_from", spec: WindowSpec{From: "11/26/2026", To: "2026-11-28"}, loc: warsaw, now: now, wantErr: "--from"},
		{name: "date_with_range", spec: WindowSpec{Date: "2026-11-26", From: "2026-11-26", To: "2026-11-27"}, loc: warsaw, now: now, wantErr: "cannot be combined"},
		{name: "from_without_to", spec: WindowSpec{From: "2026-11-26"}, loc: warsaw, now: now, wantErr: "go together"},
		{name: "zero_days", spec: WindowSpec{Days: 0}, loc: warsaw, now: now, wantErr: "RECON_DAYS"},
		// Found by FuzzNewWindow: counting back 2^62 days wrapped the calendar.
		{name: "days_beyond_the_calendar", spec: WindowSpec{Days: 1 << 62}, loc: warsaw, now: now, wantErr: "RECON_DAYS must be from 1 to"},
		{name: "two_thousand_years_over_max_days", spec: WindowSpec{From: "0000-01-01", To: "2026-11-28", MaxDays: 700_000}, loc: warsaw, now: now, wantErr: "has 740314 days, over RECON_MAX_DAYS=700000"},
		{name: "shard_of_a_range", spec: WindowSpec{From: "2026-11-01", To: "2026-11-10", Shard: "1/3"}, loc: warsaw, now: now, wantFrom: "2026-11-05", wantTo: "2026-11-07"},
		{name: "shard_malformed", spec: WindowSpec{Date: "2026-11-26", Shard: "1-3"}, loc: warsaw, now: now, wantErr: "must be I/N"},
		{name: "shard_past_the_last", spec: WindowSpec{From: "2026-11-01", To: "2026-11-10", Shard: "3/3"}, loc: warsaw, now: now, wantErr: "I must be from 0 to 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewWindow(tt.spec, tt.loc, tt.now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.wantFrom, tt.wantTo}, []string{w.From.String(), w.To.String()}); diff != "" {
				t.Errorf("window (-want +got):\n%s", diff)
			}
			if w.Loc != tt.loc {
				t.Errorf("loc = %v", w.Loc)
			}
		})
	}
}

// Len counts every day of a window, however long: a time.Duration would
// saturate past 292 years.
func TestWindowLen(t *testing.T) {
	tests := []struct {
		from, to string
		want     int
	}{
		{"2026-11-28", "2026-11-28", 1},
		{"2026-01-01", "2026-12-31", 365},
		{"1700-01-01", "2026-12-31", 119_434},
		{"0000-01-01", "9999-12-31", 3_652_425},
	}
	for _, tt := range tests {
		t.Run(tt.from+"_"+tt.to, func(t *testing.T) {
			if got := (Window{From: date(tt.from), To: date(tt.to), Loc: time.UTC}).Len(); got != tt.want {
				t.Errorf("Len = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestShard(t *testing.T) {
	t.Parallel()
	w := Window{From: date("2026-01-01"), To: date("2026-01-10"), Loc: time.UTC}
	var got []string
	for i := 0; i < 3; i++ {
		s, err := w.Shard(i, 3)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.From.String()+".."+s.To.String())
	}
	want := []string{"2026-01-01..2026-01-04", "2026-01-05..2026-01-07", "2026-01-08..2026-01-10"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shards (-want +got):\n%s", diff)
	}
	for _, bad := range [][2]int{{3, 3}, {-1, 3}, {0, 0}, {0, 11}} {
		if _, err := w.Shard(bad[0], bad[1]); err == nil {
			t.Errorf("Shard(%d, %d) succeeded", bad[0], bad[1])
		}
	}
}

func TestLoadZone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, zone, wantErr string }{
		{"iana_name", "Europe/Warsaw", ""},
		{"utc", "UTC", ""},
		{"local_depends_on_the_machine", "Local", "must be an IANA zone name"},
		{"empty", "", "must be an IANA zone name"},
		{"unknown", "Mars/Olympus", "unknown time zone"},
	} {
		loc, err := LoadZone(tt.zone)
		switch {
		case tt.wantErr == "" && (err != nil || loc.String() != tt.zone):
			t.Errorf("%s: LoadZone(%q) = %v, %v", tt.name, tt.zone, loc, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: LoadZone(%q) error %v, want %q", tt.name, tt.zone, err, tt.wantErr)
		}
	}
}

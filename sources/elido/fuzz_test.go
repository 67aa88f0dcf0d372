package elido

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clickrecon/clickrecon/reconcile"
)

// The fuzz targets run each decoder, and the checks the client applies
// after it, on arbitrary bodies. None may panic, and whatever they accept
// must hold what the rest of clickrecon relies on: non-negative counts
// whose sum fits an int64, exactly the days or hours asked for, in order.
// Seeds live in testdata/fuzz/<target>; a crasher found stays there.

var (
	fuzzFrom = mustDate("2026-11-26")
	fuzzTo   = mustDate("2026-11-28")

	// fuzzZones are the zones FuzzDecodeHours picks from: whole-hour,
	// half-hour and half-hour-DST offsets. Loading arbitrary names would
	// make the fuzzer read the zone database, not the decoder.
	fuzzZones = []string{"UTC", "Europe/Warsaw", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe"}
	fuzzDay0  = mustDate("2026-01-01")
)

func mustDate(s string) reconcile.Date {
	d, err := reconcile.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func FuzzDecodeSummary(f *testing.F) {
	f.Add([]byte(`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":12345,"unique_clicks":9876}`))
	f.Add([]byte(`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":9223372036854775807,"unique_clicks":0}`))
	f.Add([]byte(`{"from":"2026-11-26","to":"2026-11-28","tz":"UTC","clicks":-1,"unique_clicks":-2}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeSummary(data)
		if err != nil {
			return
		}
		if err := checkSummary(s, fuzzFrom, fuzzTo, "UTC"); err != nil {
			return
		}
		switch {
		case s.From != fuzzFrom || s.To != fuzzTo || s.TZ != "UTC":
			t.Errorf("accepted a summary for %s..%s %s", s.From, s.To, s.TZ)
		case s.Clicks < 0 || s.UniqueClicks < 0 || s.UniqueClicks > s.Clicks:
			t.Errorf("accepted counts %d clicks, %d unique", s.Clicks, s.UniqueClicks)
		}
	})
}

func FuzzDecodeDays(f *testing.F) {
	f.Add([]byte(`{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":1710},{"date":"2026-11-27","clicks":0},{"date":"2026-11-28","clicks":3}]}`))
	f.Add([]byte(`{"interval":"day","tz":"UTC","items":[{"date":"2026-11-28","clicks":1},{"date":"2026-11-27","clicks":0},{"date":"2026-11-26","clicks":3}]}`))
	f.Add([]byte(`{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":9223372036854775807},{"date":"2026-11-27","clicks":1},{"date":"2026-11-28","clicks":0}]}`))
	f.Add([]byte(`{"interval":"day","tz":"UTC","items":[{"date":"2026-11-26","clicks":1},{"date":"2026-11-26","clicks":1},{"date":"2026-11-28","clicks":0}]}`))
	f.Add([]byte(`{"interval":"day","tz":"UTC","items":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, days, err := decodeDays(data)
		if err != nil {
			return
		}
		if checkHeader(h, intervalDay, "UTC") != nil || checkDays(days, fuzzFrom, fuzzTo) != nil {
			return
		}
		if len(days) != 3 {
			t.Fatalf("accepted %d days for a 3-day range", len(days))
		}
		var sum int64
		for i, d := range days {
			if want := fuzzFrom.AddDays(i); d.Date != want {
				t.Errorf("item %d is %s, want %s", i, d.Date, want)
			}
			if d.Clicks < 0 || d.Clicks > math.MaxInt64-sum {
				t.Errorf("accepted count %d after a sum of %d", d.Clicks, sum)
			}
			sum += d.Clicks
		}
	})
}

func FuzzDecodeHours(f *testing.F) {
	// zone indexes fuzzZones; day counts days from 2026-01-01.
	f.Add([]byte(`{"interval":"hour","tz":"Europe/Warsaw","items":[{"ts":"2026-10-25T02:00:00+02:00","clicks":31},{"ts":"2026-10-25T02:00:00+01:00","clicks":28}]}`), uint8(1), uint16(297))
	f.Add([]byte(`{"interval":"hour","tz":"UTC","items":[{"ts":"2026-11-26T00:00:00Z","clicks":9223372036854775807},{"ts":"2026-11-26T01:00:00Z","clicks":1}]}`), uint8(0), uint16(329))
	f.Add(hoursBody("Asia/Kolkata", "2026-11-26", 24), uint8(2), uint16(329))
	f.Add(hoursBody("Europe/Warsaw", "2026-03-29", 23), uint8(1), uint16(87))
	f.Add(hoursBody("Europe/Warsaw", "2026-10-25", 25), uint8(1), uint16(297))
	f.Fuzz(func(t *testing.T, data []byte, zone uint8, dayNum uint16) {
		tz := fuzzZones[int(zone)%len(fuzzZones)]
		loc, err := time.LoadLocation(tz)
		if err != nil {
			t.Skip(err)
		}
		day := fuzzDay0.AddDays(int(dayNum) % 800)
		h, hours, err := decodeHours(data)
		if err != nil {
			return
		}
		if checkHeader(h, intervalHour, tz) != nil || checkHours(hours, day, loc) != nil {
			return
		}
		start, end := day.Bounds(loc)
		if len(hours) < 23 || len(hours) > 25 {
			t.Fatalf("accepted %d hours for %s in %s", len(hours), day, tz)
		}
		var sum int64
		for i, hc := range hours {
			if !hc.Start.Equal(start.Add(time.Duration(i)*time.Hour)) || !hc.Start.Before(end) {
				t.Errorf("hour %d starts at %s, outside %s..%s or out of order", i, hc.Start, start, end)
			}
			if hc.Clicks < 0 || hc.Clicks > math.MaxInt64-sum {
				t.Errorf("accepted count %d after a sum of %d", hc.Clicks, sum)
			}
			sum += hc.Clicks
		}
	})
}

func FuzzDecodeBreakdown(f *testing.F) {
	f.Add([]byte(`{"items":[{"link_id":"lnk_9a","clicks":431},{"link_id":90071992547409931234,"clicks":3}],"next_cursor":"b64"}`))
	f.Add([]byte(`{"items":[{"country_code":"PL","clicks":600},{"country_code":"","clicks":4}]}`))
	f.Add([]byte(`{"items":[{"link_id":"a","clicks":9223372036854775807},{"link_id":"b","clicks":1}],"next_cursor":null}`))
	f.Add([]byte(`{"items":[{"link_id":"","clicks":-1}]}`))
	f.Add([]byte(`{"items":[{"link_id":{"x":1},"clicks":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeBreakdown(data)
		if err != nil {
			return
		}
		if links, err := p.links(); err == nil {
			if _, err := checkCounts(links, 0); err == nil {
				var sum int64
				for _, l := range links {
					if l.LinkID == "" {
						t.Errorf("accepted an empty link id")
					}
					if l.Clicks < 0 || l.Clicks > math.MaxInt64-sum {
						t.Errorf("accepted count %d after a sum of %d", l.Clicks, sum)
					}
					sum += l.Clicks
				}
			}
		}
		if countries, err := p.countries(); err == nil {
			if _, err := checkCounts(countries, 0); err == nil {
				for _, c := range countries {
					if c.Clicks < 0 {
						t.Errorf("accepted count %d", c.Clicks)
					}
				}
			}
		}
	})
}

// FuzzAPIErrorFields: an error body, JSON or not, never panics, never
// yields a negative wait, and once redacted never shows the key, however
// it is placed against the snippet's end.
func FuzzAPIErrorFields(f *testing.F) {
	const key = "sk_live_FUZZKEY_0123456789"
	f.Add([]byte(`{"error":"human-readable message","code":"machine_code","request_id":"req_1"}`), 0)
	f.Add([]byte(`{"error":"rate_limited","message":"slow down","retry_after_seconds":12}`), 0)
	f.Add([]byte(`{"error":"rate_limited","message":"slow down","retry_after_seconds":1e300}`), 0)
	f.Add([]byte(`<html><body>503 Service Unavailable</body></html>`), 100)
	f.Add([]byte(strings.Repeat("é", 200)), 119)
	f.Fuzz(func(t *testing.T, body []byte, at int) {
		// Put the key somewhere in the body, as a page echoing the
		// request's Authorization header would.
		if at < 0 || at > len(body) {
			at = len(body) / 2
		}
		echoed := append(append(append([]byte(nil), body[:at]...), "Bearer "+key...), body[at:]...)
		c := &Client{apiKey: key}
		ef := c.errorFields(echoed)
		leaked := func(s string) bool {
			return strings.Contains(s, key) || strings.Contains(s, key[:12]) && !strings.Contains(string(body), key[:12])
		}
		for _, s := range []string{ef.code, ef.message, ef.requestID} {
			if leaked(s) {
				t.Errorf("the key shows: %q", s)
			}
		}
		if ef.wait < 0 {
			t.Errorf("wait %s is negative", ef.wait)
		}
		if !ef.asked && ef.wait != 0 {
			t.Errorf("a wait of %s the body did not ask for", ef.wait)
		}
		if n := utf8.RuneCountInString(ef.message); n > 121 && json.Unmarshal(echoed, new(errorBody)) != nil {
			t.Errorf("a non-JSON body gave a message of %d characters", n)
		}
	})
}

// FuzzRetryAfterHeader: a wait read from headers is never negative.
func FuzzRetryAfterHeader(f *testing.F) {
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	for _, s := range []string{"12", "0", "-1", "9223372036854775807", "Sun, 29 Nov 2026 03:01:00 GMT", "1795935660", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := retryAfterHeader(v, now); ok && d < 0 {
			t.Errorf("Retry-After %q: wait %s", v, d)
		}
		if d, ok := rateLimitResetHeader(v, now); ok && d < 0 {
			t.Errorf("X-RateLimit-Reset %q: wait %s", v, d)
		}
	})
}

// hoursBody is a valid interval=hour answer of n zero hours of day in tz.
func hoursBody(tz, day string, n int) []byte {
	loc, _ := time.LoadLocation(tz)
	start, _ := mustDate(day).Bounds(loc)
	var items []string
	for i := range n {
		items = append(items, `{"ts":"`+start.Add(time.Duration(i)*time.Hour).UTC().Format(time.RFC3339)+`","clicks":0}`)
	}
	return []byte(`{"interval":"hour","tz":"` + tz + `","items":[` + strings.Join(items, ",") + `]}`)
}

func FuzzDecodeClicks(f *testing.F) {
	f.Add([]byte(`{"items":[{"ts":"2026-11-28T23:59:58.123Z","link_id":"lnk_9a","country_code":"PL"}],"next_cursor":"opaque"}`))
	f.Add([]byte(`{"items":[{"ts":"2026-11-28T23:59:58.123Z","link_id":12345678901234567890,"country_code":""}],"next_cursor":null}`))
	f.Add([]byte(`{"items":[{"ts":"2026-11-28T23:59:58.123Z","link_id":"a"}]}`))
	f.Add([]byte(`{"items":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeClicks(data)
		if err != nil {
			return
		}
		from, to := time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
		if err := checkClicks(p.clicks, nil, from, to); err != nil {
			return
		}
		for i, c := range p.clicks {
			switch {
			case c.LinkID == "":
				t.Errorf("accepted click %d with no link id", i)
			case c.TS.Before(from) || !c.TS.Before(to):
				t.Errorf("accepted click %d at %s, outside the hour", i, c.TS)
			case i > 0 && c.TS.After(p.clicks[i-1].TS):
				t.Errorf("accepted click %d out of order", i)
			case c.TS.Location() != time.UTC:
				t.Errorf("click %d is not in UTC", i)
			}
		}
	})
}

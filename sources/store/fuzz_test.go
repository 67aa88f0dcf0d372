package store

import (
	"math"
	"strconv"
	"testing"
)

// FuzzCountRows feeds the rows of a custom count query, with the hostile
// values a driver can scan (text, bytes, integers, floats, NULL, other
// types), to the code that adds them up. Whatever the values: no panic,
// a value that is not a count is an error, and what is accepted adds up:
// the day's total is the sum of its links, never negative, never past
// MaxClicks.
func FuzzCountRows(f *testing.F) {
	f.Add("lnk_1", "12", int64(3), 2.0, uint8(0))
	f.Add("", "9223372036854775807", int64(math.MaxInt64), math.Inf(1), uint8(1))
	f.Add("=cmd|' /C calc'!A0", "-1", int64(-5), -0.5, uint8(2))
	f.Add("\x00\r\n\t", "1e300", int64(1<<53), 9007199254740993.0, uint8(3))
	f.Add("lnk_2", "12.0", int64(0), math.NaN(), uint8(4))
	f.Add("lnk_3", " 7", int64(1), 1e16, uint8(5))
	f.Fuzz(func(t *testing.T, link, text string, i int64, fl float64, kind uint8) {
		var clicks []any
		switch kind % 6 {
		case 0:
			clicks = []any{text, []byte(text), i}
		case 1:
			clicks = []any{fl, i, text}
		case 2:
			clicks = []any{i, i, i, i}
		case 3:
			clicks = []any{nil, true, fl}
		case 4:
			clicks = []any{[]byte(text), fl, fl}
		default:
			clicks = []any{text, text, text}
		}
		var linkVal any = link
		if kind&8 != 0 {
			linkVal = []byte(link)
		}
		if kind&16 != 0 {
			linkVal = i
		}
		dc := DayCounts{Links: map[string]int64{}}
		for _, c := range clicks {
			before := dc.Total
			err := dc.addRow(linkVal, c)
			if err != nil {
				if dc.Total != before {
					t.Fatalf("a refused row %#v changed the total from %d to %d", c, before, dc.Total)
				}
				continue
			}
			n := dc.Total - before
			switch v := c.(type) {
			case int64:
				if n != v {
					t.Fatalf("row %d added %d", v, n)
				}
			case string:
				if p, err := strconv.ParseInt(v, 10, 64); err == nil && p != n {
					t.Fatalf("row %q added %d", v, n)
				}
			}
		}
		var sum int64
		for id, n := range dc.Links {
			if n < 0 {
				t.Fatalf("link %q has %d clicks", id, n)
			}
			sum += n
		}
		if sum != dc.Total || dc.Total < 0 || dc.Total > MaxClicks {
			t.Fatalf("total %d, sum of links %d (max %d)", dc.Total, sum, int64(MaxClicks))
		}
	})
}

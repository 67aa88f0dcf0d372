// Package words writes the counts, deltas and nouns that clickrecon's
// reports, summaries and alerts show to a person: 12,345, +7, - for a
// count that is not known, 1 gap and 2 gaps. It imports nothing of
// clickrecon's, so that any package may use it.
package words

import (
	"fmt"
	"strconv"
	"strings"
)

// Num writes n with thousands grouped: 12,345.
func Num(n int64) string {
	s := strings.TrimPrefix(strconv.FormatInt(n, 10), "-") // abs(math.MinInt64) does not fit an int64
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if n < 0 {
		return "-" + b.String()
	}
	return b.String()
}

// Signed writes n grouped, with a + when it is positive.
func Signed(n int64) string {
	if n > 0 {
		return "+" + Num(n)
	}
	return Num(n)
}

// OptNum writes a count that may not be known as - when it is not.
func OptNum(n *int64) string {
	if n == nil {
		return "-"
	}
	return Num(*n)
}

// OptSigned writes a delta that may not be known as - when it is not.
func OptSigned(n *int64) string {
	if n == nil {
		return "-"
	}
	return Signed(*n)
}

// Hours writes a day's length: 24, 23, 25, or 24.5 on Lord Howe Island.
func Hours(h float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", h), ".0")
}

// Plural writes a count and its noun: 1 gap, 2 gaps.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

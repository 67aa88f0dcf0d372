package reconcile

import (
	"fmt"
	"math"
)

// MaxClicks is the largest count of clicks clickrecon takes for one day,
// one range or one window: 2^53−1, the largest integer a float64 (and so
// JavaScript, jq, and the percentage thresholds of Tolerance) holds
// exactly. No workspace comes near it; a count beyond it (a custom query
// returning 2^63−1, an API answering garbage) is a misread, and its day is
// unverifiable rather than a gap or a wrapped total.
const MaxClicks int64 = 1<<53 - 1

// AddClicks returns a+b and true, or 0 and false when the sum does not fit
// an int64: a count never wraps around.
func AddClicks(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// SubClicks returns a−b and true, or 0 and false when the difference does
// not fit an int64.
func SubClicks(a, b int64) (int64, bool) {
	if (b < 0 && a > math.MaxInt64+b) || (b > 0 && a < math.MinInt64+b) {
		return 0, false
	}
	return a - b, true
}

// CountInRange reports whether n can be a count of clicks: 0 to MaxClicks.
func CountInRange(n int64) bool { return n >= 0 && n <= MaxClicks }

// outOfRange is the reason a count cannot be taken: who gave it, and the
// range a count must be in.
func outOfRange(who string, n int64) string {
	return fmt.Sprintf("%s count %d is out of range (a count of clicks is from 0 to %d): a misread, not a gap", who, n, MaxClicks)
}

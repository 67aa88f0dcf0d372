package words

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNum(t *testing.T) {
	tests := []struct {
		n           int64
		num, signed string
	}{
		{0, "0", "0"},
		{7, "7", "+7"},
		{-1234, "-1,234", "-1,234"},
		{12345, "12,345", "+12,345"},
		{math.MaxInt64, "9,223,372,036,854,775,807", "+9,223,372,036,854,775,807"},
		{math.MinInt64, "-9,223,372,036,854,775,808", "-9,223,372,036,854,775,808"},
	}
	for _, tt := range tests {
		t.Run(strconv.FormatInt(tt.n, 10), func(t *testing.T) {
			if diff := cmp.Diff([]string{tt.num, tt.signed}, []string{Num(tt.n), Signed(tt.n)}); diff != "" {
				t.Errorf("Num, Signed (-want +got):\n%s", diff)
			}
		})
	}
}

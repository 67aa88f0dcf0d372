package console

import (
	"bytes"
	"testing"
)

func TestRenderBar(t *testing.T) {
	for _, tt := range []struct {
		done, total int
		want        string
	}{
		{0, 4, "store        [..........] 0/4"},
		{2, 4, "store        [#####.....] 2/4"},
		{4, 4, "store        [##########] 4/4"},
		{9, 4, "store        [##########] 4/4"},
	} {
		if got := renderBar("store", tt.done, tt.total, 10); got != tt.want {
			t.Errorf("renderBar(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
}

// On a terminal a log line clears the bar and the bar comes back below
// it; anywhere else nothing but the log line is written.
func TestProgressAroundLogLines(t *testing.T) {
	var term bytes.Buffer
	p := &Bar{w: &term, live: true}
	p.Step("store", 1, 2)
	p.Write([]byte("log line\n"))
	p.Done()
	want := "\r\033[K" + renderBar("store", 1, 2, 30) + "\r\033[Klog line\n" + renderBar("store", 1, 2, 30) + "\r\033[K"
	if got := term.String(); got != want {
		t.Errorf("terminal got %q\nwant %q", got, want)
	}

	var plain bytes.Buffer
	q := NewBar(&plain)
	q.Step("store", 1, 2)
	q.Write([]byte("log line\n"))
	q.Done()
	if got := plain.String(); got != "log line\n" {
		t.Errorf("not a terminal: got %q", got)
	}
}

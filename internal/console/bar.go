// Package console is what a command shows on stderr: the run's logger
// (text on a terminal, JSON anywhere else) and, on a terminal, a progress
// bar that the log lines go through.
package console

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"
)

// Bar draws a one-line progress bar on a terminal's stderr during a
// long run. Log lines go through it too (Writer), so that each one first
// clears the bar and the bar is drawn again below it. On anything but a
// terminal it draws nothing and passes log lines through untouched.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	shown bool
	line  string
}

// NewBar returns a Bar on w, live only when w is a terminal.
func NewBar(w io.Writer) *Bar {
	f, ok := w.(*os.File)
	return &Bar{w: w, live: ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))}
}

// Live reports whether the bar is drawn: its writer is a terminal.
func (p *Bar) Live() bool { return p.live }

// Write writes a log line above the bar.
func (p *Bar) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.shown {
		io.WriteString(p.w, "\r\033[K")
	}
	n, err := p.w.Write(b)
	if p.live && p.shown {
		io.WriteString(p.w, p.line)
	}
	return n, err
}

// Step shows that done of total steps of stage are over.
func (p *Bar) Step(stage string, done, total int) {
	if !p.live || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = renderBar(stage, done, total, 30)
	p.shown = true
	io.WriteString(p.w, "\r\033[K"+p.line)
}

// Done clears the bar.
func (p *Bar) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.shown {
		io.WriteString(p.w, "\r\033[K")
	}
	p.shown = false
}

// renderBar draws "stage [#####.....] done/total".
func renderBar(stage string, done, total, width int) string {
	done = min(max(done, 0), total)
	filled := width * done / total
	return fmt.Sprintf("%-12s [%s%s] %d/%d", stage, strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
}

package sim

import (
	"strings"
	"time"

	"github.com/clickrecon/clickrecon/sources/elidotest"
)

// fault is a night's fault: a plan at a point, faults of the fake Elido,
// or a state of the night (a database gone, the reports refused).
type fault struct {
	name  string
	plan  *plan
	elido []elidotest.Fault
	setup func(s *sim)
	// codes are the exit codes the night may end with when the fault
	// struck and the process lived; nil: those of a clean night.
	codes []int
	// unchecked: the night could not check or keep what it found, and
	// Slack must hear it (a notice) unless a notice of it stands.
	unchecked bool
	// slackDown: Slack itself failed, so no notice can be asked for.
	slackDown bool
}

func isPost(p point) bool {
	return p.kind == "slack" && (strings.HasPrefix(p.what, "POST /services/") || p.what == "POST /api/chat.postMessage")
}

func sqlIs(kind, prefix string) func(p point) bool {
	return func(p point) bool {
		return p.kind == kind && strings.HasPrefix(strings.ToUpper(statement(p.what)), prefix)
	}
}

// statement is q without the comments that lead it.
func statement(q string) string {
	for {
		q = strings.TrimSpace(q)
		switch {
		case strings.HasPrefix(q, "--"):
			_, q, _ = strings.Cut(q, "\n")
		case strings.HasPrefix(q, "/*"):
			_, q, _ = strings.Cut(q, "*/")
		default:
			return strings.Join(strings.Fields(q), " ")
		}
	}
}

func anyOf(kind string) func(p point) bool { return func(p point) bool { return p.kind == kind } }

// faultKinds are every fault the simulation injects; the seed chooses
// one a night, or none.
var faultKinds = []func(s *sim, repair bool) fault{
	func(*sim, bool) fault {
		return fault{name: "elido 401 (key revoked for the night)", elido: []elidotest.Fault{{Kind: elidotest.Unauthorized}}, codes: []int{2}, unchecked: true}
	},
	func(*sim, bool) fault {
		return fault{name: "elido 429 (rate limited, then answers)", elido: []elidotest.Fault{{Kind: elidotest.RateLimited, Times: 2, RetryAfter: 20 * time.Second}}}
	},
	func(*sim, bool) fault {
		return fault{name: "elido 503 (then answers)", elido: []elidotest.Fault{{Kind: elidotest.ServerError, Status: 503, Times: 2}}}
	},
	func(*sim, bool) fault {
		return fault{name: "elido 500 (all night)", elido: []elidotest.Fault{{Kind: elidotest.ServerError, Status: 500}}, codes: []int{3}, unchecked: true}
	},
	func(*sim, bool) fault {
		return fault{name: "elido slow (one answer past the timeout)", elido: []elidotest.Fault{{Kind: elidotest.Slow, Delay: 5 * time.Second, Times: 1}}}
	},
	func(*sim, bool) fault {
		return fault{name: "store gone for the night", setup: func(s *sim) { s.gate.setDown("store", "write") }, codes: []int{3}, unchecked: true}
	},
	func(*sim, bool) fault {
		return fault{name: "history gone for the night", setup: func(s *sim) { s.gate.setDown("history") }, codes: []int{3}, unchecked: true}
	},
	func(*sim, bool) fault {
		return fault{name: "report location refusing", setup: func(s *sim) { s.gate.setRefuse() }, codes: []int{2, 3}, unchecked: true}
	},
	func(*sim, bool) fault {
		// A webhook's 500 may have posted: the run cannot know, exits 3
		// and the next run settles it.
		return fault{name: "slack 500 (once)", plan: &plan{name: "slack 500", match: isPost, nth: 1, how: "status500"}, codes: []int{0, 1, 3}, slackDown: true}
	},
	func(*sim, bool) fault {
		return fault{name: "slack 503 (all night)", plan: &plan{match: anyOf("slack"), nth: 1, how: "status503"}, setup: func(s *sim) { s.gate.setStatus(503) }, codes: []int{3}, slackDown: true}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "slack post taken, answer lost", plan: &plan{match: isPost, nth: s.nth(), how: "lose"}, codes: []int{0, 1, 3}, slackDown: true}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill before a slack post", plan: &plan{match: isPost, nth: s.nth(), how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill after a slack post", plan: &plan{match: isPost, nth: s.nth(), how: "kill", after: true}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "SIGTERM at a slack post", plan: &plan{match: isPost, nth: s.nth(), how: "term"}, codes: []int{3}, slackDown: true}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill before the outbox intent", plan: &plan{match: sqlIs("history", "INSERT INTO OUTBOX"), nth: s.nth(), how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill after the outbox intent", plan: &plan{match: sqlIs("history", "INSERT INTO OUTBOX"), nth: s.nth(), how: "kill", after: true}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill as a post is marked sent", plan: &plan{match: sqlIs("history", "UPDATE OUTBOX"), nth: s.nth(), how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill as the run is recorded", plan: &plan{match: sqlIs("history", "INSERT INTO RUNS"), nth: 1, how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill at a history statement", plan: &plan{match: anyOf("history"), nth: 1 + s.rng.IntN(40), how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "SIGTERM at a history statement", plan: &plan{match: anyOf("history"), nth: 1 + s.rng.IntN(40), how: "term"}, codes: []int{3}, slackDown: true}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill mid report write", plan: &plan{match: func(p point) bool { return p.kind == "s3" && strings.HasPrefix(p.what, "PUT") }, nth: 1 + s.rng.IntN(6), how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill mid prune", plan: &plan{match: func(p point) bool { return p.kind == "s3" && strings.HasPrefix(p.what, "DELETE") }, nth: 1, how: "kill"}}
	},
	func(s *sim, repair bool) fault {
		if !repair {
			return fault{}
		}
		return fault{name: "kill mid repair insert", plan: &plan{match: sqlIs("write", "INSERT"), nth: 1 + s.rng.IntN(5), how: "kill"}}
	},
	func(s *sim, _ bool) fault {
		return fault{name: "kill at a store read", plan: &plan{match: anyOf("store"), nth: 1 + s.rng.IntN(20), how: "kill"}}
	},
}

// chooseFault draws the night's fault: none on about half the nights.
func (s *sim) chooseFault(repair bool) fault {
	if s.rng.IntN(2) == 0 {
		return fault{}
	}
	f := faultKinds[s.rng.IntN(len(faultKinds))](s, repair)
	if f.plan != nil && f.plan.name == "" {
		f.plan.name = f.name
	}
	return f
}

func (g *gate) setDown(kinds ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range kinds {
		g.down[k] = true
	}
}

func (g *gate) setRefuse() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuse = true
}

func (g *gate) setStatus(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status = status
}

// count adds the night to the figures.
func (s *sim) count(f fault, struck, killed bool) {
	stats.Lock()
	defer stats.Unlock()
	stats.nights++
	if struck {
		stats.faultNights++
		stats.faults[f.name]++
	}
	if killed {
		stats.killed++
	}
	for k, v := range s.world.events {
		stats.events[k] += v
	}
	clear(s.world.events)
}

// nth is which matching point a fault strikes: mostly the first, a
// night's posts and intents being few.
func (s *sim) nth() int {
	if s.rng.IntN(4) == 0 {
		return 2
	}
	return 1
}

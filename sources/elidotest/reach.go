package elidotest

import "time"

// SetReach makes clicks/recent serve no click before since, as the real
// endpoint, which keeps a recent window only, does for old hours: the
// counts (timeseries, summary, breakdowns) still hold those clicks. The
// zero time ends the limit.
func (s *Server) SetReach(since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reach = since
}

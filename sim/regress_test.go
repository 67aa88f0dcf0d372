package sim

import (
	"fmt"
	"testing"
)

// The sequences the simulation found broken, kept as they were found:
// each replays its seed to the night that broke.
func TestSimulationSeedsThatFound(t *testing.T) {
	for _, c := range []struct {
		simConfig
		what string
	}{
		// SIGTERM as "Reports stored again" reached Slack: the next
		// night posted it again, unmarked, with a gap alert.
		{simConfig{seed: 1, nights: 20, slack: "webhook", db: "sqlite"}, "recovery repeated after SIGTERM mid-post"},
		// The same with a bot token, which can read the channel back:
		// "Checking again" posted twice.
		{simConfig{seed: 5, nights: 13, slack: "bot", db: "sqlite"}, "bot recovery posted twice"},
	} {
		t.Run(fmt.Sprintf("seed=%d/%s/%s", c.seed, c.slack, c.db), func(t *testing.T) {
			t.Parallel()
			t.Log(c.what)
			runSim(t, c.simConfig)
		})
	}
}

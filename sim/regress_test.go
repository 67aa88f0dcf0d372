package sim

import (
	"fmt"
	"testing"
)

// The sequences the simulation found broken, kept as they were found:
// each replays its seed to the night that broke.
func TestSimulationSeedsThatFound(t *testing.T) {
	t.Parallel() // beside TestSimulation's nights, which wait on their databases more than on the CPU
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
		// A day healed, then a gap again after Elido revised it: the new
		// alert tells the new gap, and the edit of the old message
		// after it says the old gap healed. The channel's word on the
		// day is the newest message's (the checker read the edit last).
		{simConfig{seed: 1005, nights: 45, slack: "bot", db: "postgres"}, "old message's edit after a new alert of its day"},
		// A webhook alert posted, its record killed; its repeat's answer
		// lost; then a night killed between the next alert's outbox
		// record and its post. That post, never sent, counted as told
		// without an answer, and the next alert showed the first day a
		// third time.
		{simConfig{seed: 1001, nights: 150, slack: "webhook", db: "sqlite"}, "a post never sent counted as maybe told"},
		// A click lost beside a duplicate in the same hour: the hour's
		// count agreed, and repair never read it.
		{simConfig{seed: 1007, nights: 40, slack: "bot", db: "sqlite"}, "a lost click hidden by a duplicate in its hour"},
		// The report location refused (a notice), the next night's
		// "reports stored again" lost its answer, then the probe refused
		// it again: nothing was posted (the probe's night never settled
		// the recovery pending under the store's identity).
		{simConfig{seed: 1024, nights: 97, slack: "webhook", db: "postgres"}, "silent night after a lost recovery, the probe failing"},
		// A bot's edit telling a day healed, killed before its record:
		// the next alert told the heal again.
		{simConfig{seed: 1057, nights: 241, slack: "bot", db: "sqlite"}, "a bot's heal told twice after a killed edit"},
		// Two webhook posts marked sent and killed before they left, then
		// an alert listing their days "as alerted" (the line shows them,
		// with their numbers); and the trend's time to alert of a post
		// still pending after the last night.
		{simConfig{seed: 1047, nights: 250, slack: "webhook", db: "sqlite"}, "days listed as alerted after posts that never left"},
		// A heal told by two webhook posts marked sent, both killed
		// before they left: taken as told (the checker's; a webhook
		// cannot tell them from posts whose answer was lost).
		{simConfig{seed: 1017, nights: 17, slack: "webhook", db: "sqlite"}, "a heal whose two posts never left"},
		// A click lost beside one Elido revised away, in the same hour,
		// of another link or country: the hour's count agreed, and repair
		// never read it; the day's per-link or per-country counts show it.
		{simConfig{seed: 1013, nights: 88, slack: "bot", db: "mariadb"}, "a lost click hidden by a revised one in its hour"},
	} {
		t.Run(fmt.Sprintf("seed=%d/%s/%s", c.seed, c.slack, c.db), func(t *testing.T) {
			if raceEnabled && c.nights > 20 {
				// Long under -race: .ci/run replays it in its simulation
				// step, without -race.
				t.Skip("replayed without -race")
			}
			t.Parallel()
			t.Log(c.what)
			runSim(t, c.simConfig)
		})
	}
}

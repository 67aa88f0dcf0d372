package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/clickrecon/clickrecon/job"
)

func TestRunRepairSpellings(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    job.RepairMode
		warning string // a part of the warning; "": none
		err     string // a part of the error; "": none
	}{
		{name: "off_by_default"},
		{name: "flag_alone_plans", args: []string{"--repair"}, want: job.RepairPrint},
		{name: "flag_with_apply_writes", args: []string{"--repair", "--apply"}, want: job.RepairApply},
		{name: "flag_false_is_off", args: []string{"--repair=false"}},
		{name: "flag_apply_before_repair", args: []string{"--apply", "--repair", "--date", "2026-10-25"}, want: job.RepairApply},
		{name: "variables", env: map[string]string{"RECON_REPAIR": "true", "REPAIR_APPLY": "true"}, want: job.RepairApply},
		{name: "variable_plans", env: map[string]string{"RECON_REPAIR": "true"}, want: job.RepairPrint},
		{name: "flag_false_over_variable", args: []string{"--repair=false"}, env: map[string]string{"RECON_REPAIR": "true"}},
		{name: "old_flag_print_after_a_space", args: []string{"--repair", "print", "--date", "2026-10-25"}, want: job.RepairPrint,
			warning: "--repair print is the old spelling and goes in the next release: write --repair"},
		{name: "old_flag_apply_after_a_space", args: []string{"--repair", "apply"}, want: job.RepairApply,
			warning: "--repair apply is the old spelling and goes in the next release: write --repair --apply"},
		{name: "old_flag_apply_after_equals", args: []string{"-repair=apply"}, want: job.RepairApply,
			warning: "write --repair --apply"},
		{name: "old_variable_print", env: map[string]string{"RECON_REPAIR": "print"}, want: job.RepairPrint,
			warning: "RECON_REPAIR=print is the old spelling and goes in the next release: write RECON_REPAIR=true"},
		{name: "old_variable_apply", env: map[string]string{"RECON_REPAIR": "apply"}, want: job.RepairApply,
			warning: "write RECON_REPAIR=true and REPAIR_APPLY=true"},
		{name: "apply_flag_without_repair", args: []string{"--apply"}, err: "--apply (REPAIR_APPLY) inserts the repair that --repair (RECON_REPAIR=true) plans: add --repair"},
		{name: "apply_variable_without_repair", env: map[string]string{"REPAIR_APPLY": "true"}, err: "add --repair"},
		{name: "unknown_value", env: map[string]string{"RECON_REPAIR": "fix"}, err: `--repair (RECON_REPAIR) must be true or false (--repair alone is true), got "fix"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseArgs(context.Background(), "run", joinRepairValue(tt.args), envconfig.MapLookuper(tt.env), io.Discard, io.Discard)
			if err != nil {
				t.Fatalf("parseArgs: %v", err)
			}
			got, warning, err := c.RunRepair()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("runRepair (-want +got):\n%s", diff)
			}
			if (tt.warning == "") != (warning == "") || !strings.Contains(warning, tt.warning) {
				t.Errorf("warning %q, want one with %q", warning, tt.warning)
			}
		})
	}
}

// The old spelling still runs, with one warning line on stderr naming the
// new one, and --apply without --repair touches nothing.
func TestRunOldRepairSpellingWarnsOnce(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	window := []string{"--from", "2026-10-24", "--to", "2026-10-26"}
	r := f.run(append(window, "--repair", "print", "--dry-run")...)
	if r.code != exitOK {
		t.Fatalf("--repair print: exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "old spelling"); n != 1 || !strings.Contains(r.stderr, "clickrecon: warning: --repair print is the old spelling and goes in the next release: write --repair\n") {
		t.Errorf("%d warnings, want one naming --repair:\n%s", n, r.stderr)
	}
	if csv := f.repairFile("repair.csv"); !strings.Contains(csv, "lnk_a") {
		t.Errorf("repair.csv:\n%s", csv)
	}
}

func TestRunApplyWithoutRepairExits2BeforeAnyRequest(t *testing.T) {
	api := dstWindowClicks()
	f := newFixture(t, "sqlite", api, lossAndDuplicate(api))
	f.env["STORE_WRITE_DSN"] = f.env["STORE_DSN"]
	r := f.run("--date", "2026-10-25", "--apply")
	if r.code != exitUsage || !strings.Contains(r.stderr, "add --repair to plan and insert it, or drop --apply") {
		t.Errorf("exit %d, want 2 saying to add --repair:\n%s", r.code, r.stderr)
	}
	if log := f.elido.RequestLog(); len(log) != 0 {
		t.Errorf("requests were made: %v", log)
	}
}

package server_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

var update = flag.Bool("update", false, "rewrite docs/settings.md from the table of settings")

// TestSettingsDoc: docs/settings.md is what the table of settings says
// (go test ./server -run TestSettingsDoc -update writes it).
func TestSettingsDoc(t *testing.T) {
	var b bytes.Buffer
	if err := server.WriteSettingsDoc(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "docs", "settings.md")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is stale: run go test ./server -run TestSettingsDoc -update", path)
	}
	for _, name := range []string{"maxmemory", "client-output-buffer-limit", "cf-max-iterations", "bind"} {
		if !strings.Contains(b.String(), "| `"+name+"` |") {
			t.Errorf("the settings doc lacks %s", name)
		}
	}
}

// TestSettingFlags: the flags are the table's settings, checked as CONFIG
// SET checks them; defaults apply, explicit flags win over a file.
func TestSettingFlags(t *testing.T) {
	newFlags := func() (*flag.FlagSet, *server.SettingFlags) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return fs, server.AddSettingFlags(fs, map[string]string{"dir": "./data"})
	}
	fs, sf := newFlags()
	if err := fs.Parse([]string{"--maxmemory", "2mb", "--tls-replication", "--cf-max-iterations", "50", "--replica-priority", "0"}); err != nil {
		t.Fatal(err)
	}
	var cfg server.Config
	if err := sf.Apply(&cfg, false); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxMemory != 2<<20 || !cfg.TLS.Replication || cfg.FilterDefaults.MaxIterations != 50 || cfg.Dir != "./data" ||
		cfg.AppendFsync != server.FsyncEverysec || cfg.ReplicaPriority != -1 {
		t.Errorf("Apply: %+v", cfg)
	}
	// A setting not given keeps Config's zero value: no BUCKETSIZE given
	// builds 4-slot buckets, where cf-bucket-size 2 builds 2.
	if cfg.FilterDefaults.BucketSize != 0 {
		t.Errorf("Apply: cf-bucket-size not given, FilterDefaults.BucketSize %d", cfg.FilterDefaults.BucketSize)
	}
	// Over a file's settings, only the flags given.
	file := server.Config{Dir: "/from/file", MaxMemory: 5 << 20}
	if err := sf.Apply(&file, true); err != nil {
		t.Fatal(err)
	}
	if file.Dir != "/from/file" || file.MaxMemory != 2<<20 {
		t.Errorf("Apply(explicit only): dir %q, maxmemory %d", file.Dir, file.MaxMemory)
	}
	for args, want := range map[string]string{
		"--maxclients 0":          `invalid value "0" for flag -maxclients: argument must be between 1 and 1000000 inclusive`,
		"--maxmemory 2tb":         `invalid value "2tb" for flag -maxmemory: argument must be a memory value`,
		"--appendfsync sometimes": `invalid value "sometimes" for flag -appendfsync: argument(s) must be one of the following: always, everysec, no`,
		"--snapshot-log-size 0":   `invalid value "0" for flag -snapshot-log-size: give a size (such as 64mb), or -1 for never`,
		"--snapshot-log-size -2":  `invalid value "-2" for flag -snapshot-log-size: argument must be a memory value`,
		"--tls-cluster=maybe":     `invalid boolean value "maybe" for -tls-cluster: argument(s) must be one of the following: yes, no`,
	} {
		fs, _ := newFlags()
		if err := fs.Parse(strings.Fields(args)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	fs, sf = newFlags()
	fs.Parse([]string{"--cf-bucket-size", "100", "--cf-initial-size", "100"})
	if err := sf.Apply(&server.Config{}, false); err == nil || !strings.Contains(err.Error(), "cf-initial-size must be at least twice cf-bucket-size") {
		t.Errorf("settings refused together: %v", err)
	}
	fs, sf = newFlags()
	fs.Parse([]string{"--snapshot-log-size", "-1"})
	var never server.Config
	if sf.Apply(&never, false); never.SnapshotLogSize != -1 {
		t.Errorf("--snapshot-log-size -1: SnapshotLogSize %d", never.SnapshotLogSize)
	}
}

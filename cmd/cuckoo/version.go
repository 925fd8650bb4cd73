package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionHelp is cuckoo version's -h text. The go command records the VCS
// revision only when it builds from a checkout with -buildvcs on: go build
// and go install do by default, go run and go test never do, and
// GOFLAGS=-buildvcs=false (go env -w, or the environment) turns it off.
const versionHelp = `Version prints the module version, the VCS revision and time it was built
from, and the Go version. The revision is there when the build recorded it:
go build or go install in a git checkout record it, unless GOFLAGS holds
-buildvcs=false (see go env GOFLAGS; go install -buildvcs=true overrides it);
go run never does. A binary without one says so.`

// noRevision is printed in place of the revision of a development build
// that recorded none, so that its absence is explained rather than silent.
const noRevision = "no VCS revision recorded: built by go run, with -buildvcs=false or outside a git checkout"

// runVersion is "cuckoo version": what go version -m would say of the
// binary, on one line.
func runVersion(e *env, args []string) error {
	fs := e.flags(versionHelp)
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(info))
	return nil
}

// versionLine formats info (nil when the binary carries none) as, for
// example, "cuckoo v1.2.0 (revision 8466b02c1f3e, 2026-12-03T18:12:18Z,
// modified) go1.26.0 linux/amd64". A build from a checkout has a
// pseudo-version, or "(devel)" when it recorded no revision, and the
// revision tells which one it is; a (devel) build without one says why
// (noRevision). A build of a released module (go install ...@v1.2.0) has
// its version and needs no revision.
func versionLine(info *debug.BuildInfo) string {
	version, goVersion := "(unknown)", runtime.Version()
	var vcs []string
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		var rev, at string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			vcs = append(vcs, "revision "+rev[:min(len(rev), 12)])
		}
		if at != "" {
			vcs = append(vcs, at)
		}
		if modified {
			vcs = append(vcs, "modified")
		}
	}
	if len(vcs) == 0 && (version == "(devel)" || version == "(unknown)") {
		vcs = append(vcs, noRevision)
	}
	line := "cuckoo " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return line + " " + goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}

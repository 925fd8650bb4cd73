package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// runVersion is "cuckoo version": what go version -m would say of the
// binary, on one line.
func runVersion(e *env, args []string) error {
	fs := e.flags("Version prints the module version, the VCS revision and time it was built\nfrom (when the build recorded them) and the Go version.")
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(info))
	return nil
}

// versionLine formats info (nil when the binary carries none) as, for
// example, "cuckoo v1.2.0 (revision 8466b02c1f3e, 2026-12-03T18:12:18Z,
// modified) go1.26.0 linux/amd64". A build from a checkout has the version
// "(devel)" and the revision tells which one it is.
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
	line := "cuckoo " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return line + " " + goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildInterrupted runs the tool and sends it SIGINT, SIGTERM or SIGHUP
// in the middle of a build: the temporary file must be gone, FILE as it was
// (absent, or its old contents), and the process ended by that signal, as a
// shell expects of an interrupted command (issue 24: Ctrl-C left a hidden 1.5
// GB ".w.cf.tmp..." file). The build reads a pipe that the test keeps open,
// so it is still running, with its temporary file created (build creates it
// before it reads a key), when the signal comes.
func TestBuildInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT or SIGTERM to send")
	}
	bin := cuckooBin(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/existing=%v", sig, existing), func(t *testing.T) {
				if signal.Ignored(sig) {
					// Under nohup the tool inherits the signal ignored, and
					// leaves it so, as a command started by nohup must.
					t.Skipf("%v is ignored in this process (nohup?), and so in the tool it starts", sig)
				}
				dir := t.TempDir()
				out := filepath.Join(dir, "w.cf")
				const old = "the previous filter"
				if existing {
					if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command(bin, "build", "-o", out, "-")
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					cmd.Process.Kill() // an error only says it has exited already
					cmd.Wait()
				})
				// Keys go in, more than a pipe buffers, so build has read some
				// of them when the write returns, and the pipe stays open: the
				// build waits for more, its temporary file created.
				if _, err := io.WriteString(stdin, strings.Join(keys("k", 250_000), "\n")+"\n"); err != nil {
					t.Fatal(err)
				}
				tmp := tempFiles(t, dir)
				if len(tmp) != 1 {
					t.Fatalf("while build reads its input the directory holds %q; want one temporary file", tmp)
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				ended := make(chan struct{})
				go func() { cmd.Wait(); close(ended) }() // its error says the process was signalled
				select {
				case <-ended:
				case <-time.After(2 * time.Minute):
					cmd.Process.Kill()
					<-ended
					t.Fatalf("build still ran 2 minutes after %v", sig)
				}
				ps := cmd.ProcessState
				ws, _ := ps.Sys().(syscall.WaitStatus)
				if !(ws.Signaled() && ws.Signal() == sig) && ps.ExitCode() != 128+int(sig) {
					t.Errorf("after %v: %v; want the process ended by %v, or exit status %d", sig, ps, sig, 128+int(sig))
				}
				if s := stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
					t.Errorf("stderr shows a panic:\n%s", s)
				}
				entries, _ := os.ReadDir(dir)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				want := ""
				if existing {
					want = "w.cf"
				}
				if strings.Join(names, " ") != want {
					t.Errorf("after %v the directory holds %q (the temporary file was %s); want %q", sig, names, tmp[0], want)
				}
				if existing {
					if b, err := os.ReadFile(out); err != nil || string(b) != old {
						t.Errorf("after %v the file holds %q, %v; want its old contents", sig, b, err)
					}
				}
			})
		}
	}
}

// tempFiles returns the names of the temporary files of w.cf in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".w.cf.tmp") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestBuildErrorRemovesTemp: a build that fails after its temporary file
// exists (a line too long, the filter full) leaves nothing in the directory.
func TestBuildErrorRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	long := writeKeys(t, dir, "long.txt", []string{"a", strings.Repeat("x", maxLine+1)})
	many := writeKeys(t, dir, "many.txt", keys("k", 5000))
	for _, args := range [][]string{
		{"build", "-o", filepath.Join(dir, "f.cf"), long},
		{"build", "-o", filepath.Join(dir, "f.cf"), "--capacity", "100", many},
	} {
		if code, _, stderr := cuckoo(t, "", args...); code != 2 {
			t.Errorf("cuckoo %q: exit %d, want 2 (%s)", args, code, stderr)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 {
			t.Errorf("cuckoo %q left files: %v", args, entries)
		}
	}
}

// TestAtomicFileDiscard: discard removes the temporary file, may be called
// again, and leaves a committed file in place.
func TestAtomicFileDiscard(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.cf")
	a, err := createAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), ".f.cf.tmp") {
		t.Errorf("after createAtomic the directory holds %v, want the temporary file", entries)
	}
	a.discard()
	a.discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("after discard the directory holds %v", entries)
	}

	a, err = createAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := a.commit(fixedWriter("CKOO")); n != 4 || err != nil {
		t.Errorf("commit: %d, %v", n, err)
	}
	a.discard()
	if b, err := os.ReadFile(path); string(b) != "CKOO" || err != nil {
		t.Errorf("after commit and discard the file holds %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after commit the directory holds %v", entries)
	}
}

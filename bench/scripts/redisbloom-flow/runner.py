#!/usr/bin/python3
"""Run RedisBloom's CF flow tests against a running server.

    /usr/bin/python3 runner.py --addr 127.0.0.1:6379 [--tag v2.6.28] [-k NAME]

The test files (default every tests/flow/test_*.py of the tag, as RLTest
collects them) and the files they import from tests/flow are taken from the
RedisBloom git mirror at the tag into a temporary directory, never into this
repository, and run unchanged with the RLTest stand-in in shim/. The tests
are found and ordered as RLTest does: the names starting with "test" in a
file, classes first by name, one instance per class, its test methods by
name.

Only the CF tests run (--all runs every one), as cuckoo serve has only the
cuckoo filter: those of test_cuckoo.py, and those whose string literals
name a CF command or setting (cf.*, cf-*) and none of RedisBloom's other
types (bf.*, bf-*, cms.*, topk.*, tdigest.*, or the cms, topk and tdigest
ACL categories). The others are left out, counted, and named when they use
CF too.

Prints one line per test (pass, FAIL or skip, with seconds), each skip's
reason, then every failure with its assertions. A failure whose every
failed assertion is an allowed difference (ALLOWED: COMMAND DOCS summary
texts, cuckoo serve's own words) is a pass, noted on its line and counted.
Exit status: 0 when nothing failed, 1 when a test failed, 2 when the run
could not start.
"""

import argparse
import ast
import contextlib
import importlib.util
import inspect
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GIT_DIR = "/work/.mirror/RedisBloom+RedisBloom/repo"

sys.dont_write_bytecode = True  # no __pycache__ in shim/ or the temp dir
sys.path.insert(0, os.path.join(HERE, "shim"))
import RLTest  # noqa: E402  (the shim, found through the path above)
import redis  # noqa: E402


def git_show(git_dir, tag, path):
    """The file at tag, or None when the tag has no such file."""
    r = subprocess.run(["git", "--git-dir", git_dir, "show", "%s:%s" % (tag, path)],
                       capture_output=True)
    return r.stdout if r.returncode == 0 else None


def test_files(git_dir, tag):
    """The tag's tests/flow/test_*.py, without .py, as RLTest collects them
    (not tests/flow/deprecated/: scripts run by hand)."""
    r = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only", tag, "tests/flow/"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("runner: %s: %s" % (tag, r.stderr.strip()))
    names = [os.path.basename(p) for p in r.stdout.split()]
    return sorted(n[:-3] for n in names if n.startswith("test") and n.endswith(".py"))


# A word of a test's string literals that names a command or setting of
# RedisBloom's other types (bf.add, bf-error-rate, cms.incrby), or one of
# their ACL categories. "bf" alone is a key name in test_cuckoo.py.
OTHER_TYPE = re.compile(r"(?i)^((bf|cms|topk|tdigest)[.-].|(cms|topk|tdigest)$)")
CF = re.compile(r"(?i)^cf[.-].")

# RedisBloom's file of CF tests: each of its tests is one, whatever it names
# (test_rdb_load_zero_numfilters RESTOREs a CF payload, naming no command).
CF_FILE = "test_cuckoo"


def scan(src):
    """{test name: (the words of its string literals that name another
    type's commands or settings, sorted; whether they name a CF command or
    setting)} for the tests of a test file's source (a class's test methods
    as Class.method), read without running it: a file of other types' tests
    may import what is not installed (test_tdigest.py: numpy)."""
    def words(node):
        other, cf = set(), False
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                for w in n.value.split():
                    if OTHER_TYPE.match(w):
                        other.add(w.lower())
                    cf = cf or bool(CF.match(w))
        return sorted(other), cf

    out = {}
    for node in ast.parse(src).body:
        if isinstance(node, ast.ClassDef) and node.name.lower().startswith("test"):
            for m in node.body:
                if isinstance(m, ast.FunctionDef) and m.name.lower().startswith("test"):
                    out["%s.%s" % (node.name, m.name)] = words(m)
        elif isinstance(node, ast.FunctionDef) and node.name.lower().startswith("test"):
            out[node.name] = words(node)
    return out


# Failed assertions that do not fail a test: (file, the assertion's source
# line, why). COMMAND DOCS summaries are cuckoo serve's own words.
ALLOWED = [
    ("docs_utils.py", "env.assertEqual(docs['summary'], summary)",
     "COMMAND DOCS summary in cuckoo serve's own words"),
]


def allowed(failure, test_dir):
    """Why the failed assertion ("file.py:line: ...") is allowed, or None."""
    m = re.match(r"([\w.]+\.py):(\d+): ", failure)
    if not m:
        return None
    try:
        with open(os.path.join(test_dir, m.group(1))) as f:
            line = f.read().splitlines()[int(m.group(2)) - 1].strip()
    except (OSError, IndexError):
        return None
    for name, text, why in ALLOWED:
        if m.group(1) == name and line == text:
            return why
    return None


def extract(git_dir, tag, name, into):
    """Write tests/flow/<name>.py at tag into the directory, then the
    tests/flow modules it imports, and theirs. Returns the names written."""
    done, todo = [], [name]
    while todo:
        mod = todo.pop()
        if mod in done:
            continue
        src = git_show(git_dir, tag, "tests/flow/%s.py" % mod)
        if src is None:
            if mod == name:
                raise SystemExit("runner: %s has no tests/flow/%s.py" % (tag, mod))
            continue  # a module from elsewhere (redis, packaging, RLTest)
        with open(os.path.join(into, mod + ".py"), "wb") as f:
            f.write(src)
        done.append(mod)
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                todo += [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                todo.append(node.module.split(".")[0])
    return done


def collect(module):
    """(name, make) pairs in RLTest's order; make() returns the callable to
    run, or raises unittest.SkipTest. Classes are made once, lazily."""
    tests = []
    for symbol in dir(module):
        obj = getattr(module, symbol)
        if not symbol.lower().startswith("test") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj):
            holder = {}

            def instance(cls=obj, holder=holder):
                if "err" in holder:
                    raise holder["err"]
                if "obj" not in holder:
                    try:
                        holder["obj"] = cls()
                    except BaseException as e:
                        holder["err"] = e
                        raise
                return holder["obj"]

            for m in dir(obj):
                if m.lower().startswith("test") and callable(getattr(obj, m)):
                    tests.append(("%s.%s" % (symbol, m), lambda m=m, instance=instance: getattr(instance(), m)))
        elif inspect.isfunction(obj):
            if inspect.signature(obj).parameters:
                tests.append((symbol, lambda f=obj: (lambda: f(RLTest.Env()))))
            else:
                tests.append((symbol, lambda f=obj: f))
    return tests


def run_one(make, test_dir):
    """Run a test: (status, seconds, details, captured output). A test
    whose failed assertions are all allowed (ALLOWED) passes, with status
    "pass*" and the reasons in details."""
    RLTest.take_failures()
    out = io.StringIO()
    start = time.monotonic()
    status, details = "pass", []
    with contextlib.redirect_stdout(out):
        try:
            res = make()()
            if inspect.isgenerator(res):
                # RLTest calls a generator test and drops the generator, so
                # its body never runs; here it runs to the end.
                for _ in res:
                    pass
        except RLTest.SkipTest as e:
            status, details = "skip", [str(e) or "skipped"]
        except Exception as e:
            status, details = "FAIL", [describe(e)]
    failures, notes = RLTest.take_failures()
    if status != "skip":
        details += notes
    why = [allowed(f, test_dir) for f in failures]
    if failures and status == "pass" and all(why):
        return "pass*", time.monotonic() - start, sorted(set(why)), out.getvalue()
    if failures:
        # Failed assertions make it a failure even if it then skipped.
        then = "then skipped: " if status == "skip" else ""
        status, details = "FAIL", failures + [then + d for d in details]
    return status, time.monotonic() - start, details, out.getvalue()


def describe(e):
    """An exception as "file.py:line: Type: message", at the innermost
    line of the test files it passed through."""
    where = "?"
    for fs in traceback.extract_tb(e.__traceback__):
        if os.path.dirname(os.path.realpath(fs.filename)) == RLTest._target["test_dir"]:
            where = "%s:%d" % (os.path.basename(fs.filename), fs.lineno)
    msg = str(e)
    if len(msg) > 300:
        msg = msg[:300] + "..."
    return "%s: raised %s: %s" % (where, type(e).__name__, msg)


def server_name(host, port):
    """What answers at host:port, for the report's heading."""
    c = redis.Redis(host=host, port=port, decode_responses=True, socket_timeout=10)
    info = c.info("server")
    name = "redis_version %s" % info.get("redis_version")
    if "cuckoo_version" in info:
        name = "cuckoo %s (%s)" % (info["cuckoo_version"], name)
    try:
        for m in c.execute_command("MODULE", "LIST"):
            m = dict(zip(m[::2], m[1::2])) if isinstance(m, list) else m
            name += ", module %s %s" % (m.get("name"), m.get("ver"))
    except redis.ResponseError:
        pass
    c.close()
    return name


def wait_ready(host, port, seconds):
    c = redis.Redis(host=host, port=port, socket_timeout=2)
    deadline = time.monotonic() + seconds
    while True:
        try:
            c.ping()
            c.close()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise SystemExit("runner: nothing answers at %s:%d" % (host, port))
            time.sleep(0.05)


def wait_synced(host, port, seconds):
    """Wait until the replica at host:port has finished its first copy
    (master_link_status up), so that a test sees only the live stream."""
    c = redis.Redis(host=host, port=port, decode_responses=True, socket_timeout=10)
    deadline = time.monotonic() + seconds
    while c.info("replication").get("master_link_status") != "up":
        if time.monotonic() > deadline:
            raise SystemExit("runner: the replica at %s:%d is not in sync" % (host, port))
        time.sleep(0.05)
    c.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--addr", required=True, help="HOST:PORT of the server under test")
    p.add_argument("--tag", default="v8.6.2", help="RedisBloom tag to take the tests from (default %(default)s)")
    p.add_argument("--file", action="append", default=[], metavar="NAME",
                   help="test file in tests/flow, without .py (repeatable; default every test_*.py of the tag)")
    p.add_argument("--all", action="store_true",
                   help="run the tests of RedisBloom's other types too (bf, cms, topk, tdigest)")
    p.add_argument("--git-dir", default=os.environ.get("REDISBLOOM_GIT_DIR", DEFAULT_GIT_DIR),
                   help="RedisBloom's git directory (env REDISBLOOM_GIT_DIR)")
    p.add_argument("-k", action="append", default=[], metavar="NAME",
                   help="run only tests whose name contains NAME (repeatable)")
    p.add_argument("--reload", choices=("skip", "noop"), default="skip",
                   help="where the target has no DEBUG RELOAD, dumpAndReload skips the test (default), "
                        "or does nothing and the test goes on (noted in the table)")
    p.add_argument("--replica", metavar="HOST:PORT", help="a replica of the server, for tests that want one")
    p.add_argument("--timeout", type=float, default=300, help="seconds one command may take (default %(default)s)")
    p.add_argument("--as-version", metavar="VERSION",
                   help="the Redis version skipOnVersionSmaller compares with, instead of the target's "
                        "redis_version (cuckoo serve reports 7.2.0 whatever RedisBloom it answers as)")
    p.add_argument("--label", default="", help="name of the target in the heading")
    p.add_argument("-v", "--verbose", action="store_true", help="print every test's output and commands")
    a = p.parse_args()

    host, _, port = a.addr.rpartition(":")
    port = int(port)
    wait_ready(host, port, 10)
    replica = None
    if a.replica:
        rhost, _, rport = a.replica.rpartition(":")
        replica = (rhost, int(rport))
        wait_ready(rhost, int(rport), 10)
        wait_synced(rhost, int(rport), 30)
    names = a.file or test_files(a.git_dir, a.tag)
    with tempfile.TemporaryDirectory(prefix="redisbloom-flow-") as tmp:
        RLTest.configure(host, port, a.timeout, tmp, a.verbose, a.reload, replica, a.as_version)
        sys.path.insert(1, tmp)
        print("RedisBloom %s tests/flow/{%s}.py against %s%s" % (
            a.tag, ",".join(names), (a.label + " at ") if a.label else "", a.addr))
        print("server: %s" % server_name(host, port) + (", replica at %s" % a.replica if a.replica else ""))
        counts = {"pass": 0, "pass*": 0, "FAIL": 0, "skip": 0}
        tally = []  # per file: name, pass, pass*, FAIL, skip, left out
        failed = []
        for name in names:
            files = extract(a.git_dir, a.tag, name, tmp)
            with open(os.path.join(tmp, name + ".py")) as f:
                src = f.read()
            found = scan(src)
            if name == CF_FILE:
                found = {n: (w, True) for n, (w, _) in found.items()}
            names_k = [n for n in sorted(found) if not a.k or any(k in n for k in a.k)]
            out = [] if a.all else [n for n in names_k if found[n][0] or not found[n][1]]
            tests = []
            if len(out) < len(names_k):
                spec = importlib.util.spec_from_file_location(name, os.path.join(tmp, name + ".py"))
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                tests = [t for t in collect(module) if t[0] in names_k and t[0] not in out]
            print()
            print("%s.py (with %s): %d CF tests, %d left out as not CF" % (
                name, ", ".join(f + ".py" for f in files[1:]) or "nothing else", len(tests), len(out)))
            if out:
                # The ones that use CF too are named, with what they need
                # beyond it.
                mixed = [n for n in out if found[n][1]]
                print("  left out: they name no CF command or setting, or also BF, CMS, TopK or T-Digest ones, "
                      "which cuckoo serve does not implement (--all runs them)%s" % (
                          "; these use CF too:" if mixed else ""))
                for n in mixed:
                    w = found[n][0]
                    print("    %s (%s%s)" % (n, ", ".join(w[:4]), ", ..." if len(w) > 4 else ""))
            if not tests:
                tally.append((name, 0, 0, 0, 0, len(out)))
                continue
            print("%-5s %7s  %s" % ("", "seconds", "test"))
            here = {"pass": 0, "pass*": 0, "FAIL": 0, "skip": 0}
            for test, make in tests:
                status, secs, details, output = run_one(make, tmp)
                counts[status] += 1
                here[status] += 1
                line = "%-5s %7.2f  %s" % (status, secs, test)
                if status != "FAIL" and details:
                    line += ": " + "; ".join(details) if status == "pass*" else ": " + details[0]
                print(line, flush=True)
                if a.verbose and output:
                    print(output.rstrip())
                if status == "FAIL":
                    failed.append((name + ".py " + test, details, output))
            tally.append((name, here["pass"] + here["pass*"], here["pass*"], here["FAIL"], here["skip"], len(out)))
        print()
        print("%-22s %6s %6s %6s %8s" % ("file", "passed", "failed", "skipped", "left out"))
        for name, ok, star, bad, skip, out in tally:
            print("%-22s %6d %6d %6d %8d" % (name + ".py", ok, bad, skip, out))
        total = counts["pass"] + counts["pass*"] + counts["FAIL"] + counts["skip"]
        print()
        print("passed %d, failed %d, skipped %d, of %d%s" % (
            counts["pass"] + counts["pass*"], counts["FAIL"], counts["skip"], total,
            "; %d passed with allowed differences only (pass*)" % counts["pass*"] if counts["pass*"] else ""))
        for name, details, output in failed:
            print()
            print("FAIL %s" % name)
            for d in details:
                print("    " + d)
            if output.strip() and not a.verbose:
                print("    output:")
                for o in output.rstrip().splitlines()[-10:]:
                    print("      " + o)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""A small stand-in for RLTest, enough to run RedisBloom's flow tests.

RedisBloom's tests/flow/*.py are written for RLTest, which starts and stops
redis-server itself. This package is our own code, written from what those
tests call (Env, Defaults, env.cmd, env.expect(...).error().contains(...),
the assert* family, the skip helpers), and it only connects to one server
that is already running: runner.py calls configure() with its address.

What the target cannot do is a skip, with the reason, never a failure:
Env(useSlaves=True), module arguments, clusters, RESP3, restarts, and a
dumpAndReload on a server without DEBUG RELOAD.

Assertions are soft, as in RLTest: a failed one is recorded (with the line of
the test file it was made on) and the test goes on. runner.py takes the
records with take_failures() after each test.

Two places are stricter than RLTest, on purpose: assertRaises and
expect(...).error() want a Redis error reply (redis.ResponseError), not any
exception, so that a dropped connection is not taken for an error reply.
"""

import contextlib
import inspect
import os
import unittest

import redis
from packaging import version

SkipTest = unittest.SkipTest

# Where the tests run: set once by configure().
_target = {"host": "127.0.0.1", "port": 6379, "timeout": 300.0, "test_dir": None, "verbose": False,
           "reload": "skip", "replica": None}

# Failed assertions of the test that is running, taken by take_failures().
_failures = []


def configure(host, port, timeout, test_dir, verbose=False, reload="skip", replica=None, as_version=None):
    """Point every Env at host:port; test_dir is where the test files are,
    to name the line an assertion or a skip was made on. reload is what
    dumpAndReload does where the target has no DEBUG RELOAD: "skip" the
    test, or "noop": go on without reloading (noted). replica is
    (host, port) of a replica of the target, for Env(useSlaves=True).
    as_version, if given, is the Redis version skipOnVersionSmaller compares
    against instead of the target's redis_version (noted on the test's line)."""
    _target.update(host=host, port=port, timeout=timeout, test_dir=os.path.realpath(test_dir), verbose=verbose,
                   reload=reload, replica=replica, as_version=as_version)
    del _notes[:]


# Where the test ran otherwise than under RLTest, taken by take_failures().
_notes = []


def take_failures():
    """The failed assertions recorded since the last call, and the notes
    of where the test ran otherwise than under RLTest."""
    out, notes = list(_failures), list(_notes)
    del _failures[:]
    del _notes[:]
    return out, notes


def _caller():
    """The innermost frame of the extracted test files: "file.py:line"."""
    frame = inspect.currentframe()
    while frame is not None:
        name = os.path.realpath(frame.f_code.co_filename)
        if _target["test_dir"] and os.path.dirname(name) == _target["test_dir"]:
            return frame, "%s:%d" % (os.path.basename(name), frame.f_lineno)
        frame = frame.f_back
    return None, "?"


def _comment_above(frame):
    """The comment lines just above the frame's line, joined, or ""."""
    try:
        with open(frame.f_code.co_filename) as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    out = []
    i = frame.f_lineno - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        out.insert(0, lines[i].strip().lstrip("#").strip())
        i -= 1
    return " ".join(out)


def _skip(reason):
    raise SkipTest(reason)


class Defaults:
    """The knobs RLTest's command line sets; only read here."""

    module = None
    module_args = None
    env = "oss"
    decode_responses = False
    use_aof = False
    use_slaves = False
    num_shards = 1
    debug_print = False
    exit_on_failure = False
    verbose = 0


class Query:
    """env.expect(...): the command is run at once; the checks chain."""

    def __init__(self, env, *query):
        self.env = env
        self.query = query
        self.error_reply = False  # a redis.ResponseError came back
        self.errorRaised = False  # any exception came back
        try:
            self.res = env.cmd(*query)
        except redis.ResponseError as e:
            self.res, self.error_reply, self.errorRaised = str(e), True, True
        except Exception as e:  # a dropped connection, a timeout
            self.res, self.errorRaised = "%s: %s" % (type(e).__name__, e), True
        if self.errorRaised:
            env.debugPrint("query: %s, error: %s" % (self._q(), self.res))

    def _q(self):
        return " ".join(_short(a) for a in self.query)

    def equal(self, expected):
        self.env._check(self.res == expected, "%s: %r == %r" % (self._q(), self.res, expected))
        return self

    def noEqual(self, expected):
        self.env._check(self.res != expected, "%s: %r != %r" % (self._q(), self.res, expected))
        return self

    def true(self):
        self.env._check(bool(self.res), "%s: %r is true" % (self._q(), self.res))
        return self

    def false(self):
        self.env._check(not self.res, "%s: %r is false" % (self._q(), self.res))
        return self

    def ok(self):
        return self.equal("OK")

    def contains(self, val):
        self.env._check(_contains(val, self.res), "%s: %r contains %r" % (self._q(), self.res, val))
        return self

    def notContains(self, val):
        self.env._check(not _contains(val, self.res), "%s: %r does not contain %r" % (self._q(), self.res, val))
        return self

    def error(self):
        self.env._check(self.error_reply, "%s: an error reply, got %r" % (self._q(), self.res))
        return self

    def noError(self):
        self.env._check(not self.errorRaised, "%s: no error, got %r" % (self._q(), self.res))
        return self

    def apply(self, fn):
        self.res = fn(self.res)
        return self

    raiseError = error
    notRaiseError = noError

    def debugPrint(self):
        print("query: %s, result: %r" % (self._q(), self.res))
        return self

    prettyPrint = debugPrint


def _contains(val, holder):
    try:
        return val in holder
    except TypeError:
        return False


def _short(a):
    """An argument as a test's reader would recognise it: printable text as
    it is, anything else as a Python literal; cut if long."""
    if isinstance(a, bytes):
        s = a.decode("ascii", "replace")
        s = s if s.isprintable() else repr(a)
    else:
        s = str(a)
        s = s if s.isprintable() else repr(s)
    return s[:60] + "..." if len(s) > 60 else s


# Env(...) arguments that need what the running server cannot give.
_UNSUPPORTED = {
    "moduleArgs": "module arguments",
    "module": "a module of its own",
    "useSlaves": "a replica (runner.py --replica; REPLICA=1 with-server.sh)",
    "useAof": "a server with appendonly and restarts",
    "useTLS": "TLS",
    "enableDebugCommand": "a server started with enable-debug-command",
}


class Env:
    """One connection to the target, with RLTest's assertions and helpers."""

    def __init__(self, testName=None, testDescription=None, env=None, shardsCount=None,
                 decodeResponses=None, protocol=None, useSlaves=None, freshEnv=False, **kwargs):
        if useSlaves and not _target["replica"]:
            _skip("Env(useSlaves=True) needs " + _UNSUPPORTED["useSlaves"])
        for name, value in kwargs.items():
            if name in ("forceTcp", "logDir", "redisBinaryPath", "dmcBinaryPath", "redisEnterpriseBinaryPath",
                        "tlsCertFile", "tlsKeyFile", "tlsCaCertFile", "terminateRetries", "terminateRetrySecs"):
                continue
            if value:
                _skip("Env(%s=%r) needs %s" % (name, value, _UNSUPPORTED.get(name, "what this shim does not provide")))
        if env not in (None, "oss", "existing-env"):
            _skip("Env(env=%r) needs a cluster" % env)
        if shardsCount not in (None, 1):
            _skip("Env(shardsCount=%r) needs a cluster" % shardsCount)
        if protocol not in (None, 2):
            _skip("Env(protocol=%r): Debian's redis-py %s speaks RESP2 only" % (protocol, redis.__version__))
        self.testName = testName
        self.decodeResponses = bool(decodeResponses if decodeResponses is not None else Defaults.decode_responses)
        self.env = "oss"
        self.useSlaves = bool(useSlaves)
        self.useAof = False
        self.shardsCount = 1
        self.debugger = None
        self.protocol = 2
        self.con = redis.Redis(host=_target["host"], port=_target["port"], decode_responses=self.decodeResponses,
                               socket_timeout=_target["timeout"])
        self.assertionFailedSummary = []
        if freshEnv:
            # RLTest starts new servers for the test; here the running ones
            # are emptied (FLUSHALL reaches the replica too).
            self.con.flushall()
            _notes.append("Env(freshEnv=True): FLUSHALL instead of new servers")

    # Commands.

    def cmd(self, *query):
        res = self.con.execute_command(*query)
        self.debugPrint("query: %s, result: %r" % (" ".join(_short(a) for a in query), res))
        return res

    execute_command = cmd
    executeCommand = cmd

    def expect(self, *query):
        return Query(self, *query)

    def getConnection(self, shardId=1):
        return self.con

    def getClusterConnectionIfNeeded(self):
        return self.con

    def getSlaveConnection(self):
        if not self.useSlaves:
            _skip("getSlaveConnection needs Env(useSlaves=True)")
        host, port = _target["replica"]
        return redis.Redis(host=host, port=port, decode_responses=self.decodeResponses,
                           socket_timeout=_target["timeout"])

    def flush(self):
        self.con.flushall()

    def broadcast(self, *query):
        self.cmd(*query)

    # Reloads and restarts.

    def dumpAndReload(self, restart=False, shardId=None, timeout_sec=None):
        """SAVE, then DEBUG RELOAD NOSAVE, as RLTest does; a target without
        DEBUG, or one that refuses it, makes the test a skip."""
        if restart:
            _skip("restartAndReload restarts the server")
        self.debugPrint("dumpAndReload: SAVE, then DEBUG RELOAD NOSAVE")
        self.con.execute_command("SAVE")
        try:
            self.con.execute_command("DEBUG", "RELOAD", "NOSAVE")
        except redis.ResponseError as e:
            msg = str(e)
            if "unknown command" in msg or "not allowed" in msg:
                if _target["reload"] == "noop":
                    _notes.append("dumpAndReload at %s did not reload (--reload noop)" % _caller()[1])
                    return
                _skip("dumpAndReload needs DEBUG RELOAD; the target says: %s" % msg)
            raise

    def restartAndReload(self, shardId=None, timeout_sec=None):
        self.dumpAndReload(restart=True)

    def reloadingIterator(self):
        yield 1
        self.dumpAndReload()
        yield 2

    retry_with_reload = reloadingIterator
    retry_with_rdb_reload = reloadingIterator
    reloading_iterator = reloadingIterator
    dump_and_reload = dumpAndReload
    restart_and_reload = restartAndReload

    def stop(self, masters=True, slaves=True):
        _skip("env.stop() stops the server")

    def start(self):
        _skip("env.start() starts the server")

    # What the environment is.

    def isCluster(self):
        return False

    is_cluster = isCluster

    def isEnterpiseCluster(self):
        return False

    def isDebugger(self):
        return False

    def isTcp(self):
        return True

    def isUnixSocket(self):
        return False

    def isUp(self):
        return self.con.ping()

    isHealthy = isUp

    def checkExitCode(self):
        return True

    # Skips. RLTest's skip() takes no reason: the reason given is the line
    # of the test that asked, with the comment above it.

    def skip(self, reason=None):
        if reason is None:
            frame, where = _caller()
            comment = _comment_above(frame) if frame else ""
            reason = "the test skips itself at %s" % where + (" (%s)" % comment if comment else "")
        _skip(reason)

    def skipOnCluster(self):
        pass

    def skipOnDebugger(self):
        pass

    def skipOnAOF(self):
        pass

    def skipOnSlave(self):
        pass

    def skipOnUnixSocket(self):
        pass

    def skipOnEnterpriseCluster(self):
        pass

    def skipOnTcp(self):
        _skip("skipOnTcp: the target is reached over TCP")

    def skipOnVersionSmaller(self, want):
        have = self.con.info("server")["redis_version"]
        if _target.get("as_version"):
            _notes.append("skipOnVersionSmaller(%r) compared with --as-version %s, not redis_version %s" % (
                want, _target["as_version"], have))
            have = _target["as_version"]
        if version.parse(str(have)) < version.parse(want):
            _skip("skipOnVersionSmaller(%r): the target reports redis_version %s" % (want, have))

    def debugPrint(self, msg, force=False):
        if force or _target["verbose"] or Defaults.debug_print:
            print("\tdebug:\t" + msg)

    # Assertions: recorded, never raised.

    def _check(self, ok, what, message=None):
        if ok:
            return
        _, where = _caller()
        if len(what) > 400:  # a long list compared: its head is enough
            what = what[:400] + "... (%d characters)" % len(what)
        line = "%s: %s" % (where, what) + (" [%s]" % message if message else "")
        self.assertionFailedSummary.append(line)
        _failures.append(line)

    def getNumberOfFailedAssertion(self):
        return len(self.assertionFailedSummary)

    def assertEqual(self, first, second, depth=0, message=None):
        self._check(first == second, "%r == %r" % (first, second), message)

    assertEquals = assertEqual
    assertListEqual = assertEqual

    def assertNotEqual(self, first, second, depth=0, message=None):
        self._check(first != second, "%r != %r" % (first, second), message)

    def assertOk(self, val, depth=0, message=None):
        self._check(val == "OK", "%r == 'OK'" % (val,), message)

    def assertCmdOk(self, *query):
        self.assertOk(self.cmd(*query))

    def assertTrue(self, val, depth=0, message=None):
        self._check(bool(val), "%r is true" % (val,), message)

    def assertFalse(self, val, depth=0, message=None):
        self._check(not val, "%r is false" % (val,), message)

    def assertContains(self, value, holder, depth=0, message=None):
        self._check(_contains(value, holder), "%r contains %r" % (holder, value), message)

    assertIn = assertContains

    def assertNotContains(self, value, holder, depth=0, message=None):
        self._check(not _contains(value, holder), "%r does not contain %r" % (holder, value), message)

    assertNotIn = assertNotContains

    def assertGreater(self, a, b, depth=0, message=None):
        self._check(a > b, "%r > %r" % (a, b), message)

    def assertGreaterEqual(self, a, b, depth=0, message=None):
        self._check(a >= b, "%r >= %r" % (a, b), message)

    def assertLess(self, a, b, depth=0, message=None):
        self._check(a < b, "%r < %r" % (a, b), message)

    def assertLessEqual(self, a, b, depth=0, message=None):
        self._check(a <= b, "%r <= %r" % (a, b), message)

    def assertIsNone(self, val, depth=0, message=None):
        self._check(val is None, "%r is None" % (val,), message)

    def assertIsNotNone(self, val, depth=0, message=None):
        self._check(val is not None, "%r is not None" % (val,), message)

    def assertIsInstance(self, val, cls, depth=0, message=None):
        self._check(isinstance(val, cls), "%r is a %s" % (val, cls.__name__), message)

    def assertAlmostEqual(self, a, b, delta, depth=0, message=None):
        self._check(abs(a - b) <= delta, "%r == %r within %r" % (a, b, delta), message)

    def assertRaises(self, exc, fn, *args):
        """assertRaises(ResponseError, env.cmd, 'CF.ADD'): fn must raise exc."""
        try:
            res = fn(*args)
        except exc:
            return
        except Exception as e:
            self._check(False, "%s raises %s, got %s: %s" % (_args(args), exc.__name__, type(e).__name__, e))
            return
        self._check(False, "%s raises %s, got %r" % (_args(args), exc.__name__, res))

    @contextlib.contextmanager
    def assertResponseError(self, msg=None, contained=None):
        """with env.assertResponseError(): the block must end in an error reply."""
        try:
            yield 1
        except redis.ResponseError as e:
            if contained:
                self._check(contained in str(e), "error %r contains %r" % (str(e), contained), msg)
        except Exception as e:
            self._check(False, "an error reply, got %s: %s" % (type(e).__name__, e), msg)
        else:
            self._check(False, "an error reply, got none", msg)


def _args(args):
    return " ".join(_short(a) for a in args)
